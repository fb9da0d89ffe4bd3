#include "schedules/pytorch_csv.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "csv_cells.hpp"
#include "schedule_file_common.hpp"
#include "schedules/dependency_order.hpp"
#include "schedules/validate.hpp"

namespace pipesim {

namespace {

// PyTorch's action types, in the order of its action regex (the order decides nothing here:
// no name is a prefix of another). OVERLAP_F_B appears only after a parenthesized group.
constexpr std::array<std::string_view, 11> action_types = {
    "F",           "I",      "B",      "W",      "UNSHARD", "RESHARD",
    "REDUCE_GRAD", "SEND_F", "RECV_F", "SEND_B", "RECV_B"};
constexpr std::string_view overlap_type = "OVERLAP_F_B";
constexpr std::string_view action_shape =
    "an action like 2F0 (stage, then F, I, B, W, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, "
    "RESHARD or REDUCE_GRAD, then microbatch)";

// PyTorch compute letter ↔ pipesim pass.
bool compute_pass(std::string_view type, Pass& pass) {
    if (type == "F")
        pass = Pass::F;
    else if (type == "I")
        pass = Pass::B;
    else if (type == "W")
        pass = Pass::W;
    else if (type == "B")
        pass = Pass::BW;
    else
        return false;
    return true;
}

std::string_view pytorch_letter(Pass pass) {
    switch (pass) {
        case Pass::F:
            return "F";
        case Pass::B:
            return "I";
        case Pass::W:
            return "W";
        case Pass::BW:
            return "B";
    }
    return "?";
}

// One parsed action: a compute op, or a communication action kept as an annotation.
struct Action {
    bool compute = false;
    Op op;
    int stage = 0;
    std::string_view type;
};

// A communication action, checked once the stages' ranks are known.
struct Communication {
    int rank = 0;
    Action action;
    std::size_t offset = 0;
    std::string text;
};

// PyTorch's actions that move or shard a stage's data as a whole (its schedules build them with
// no microbatch: _Action(stage, UNSHARD, None)); the sends and receives name one.
bool takes_microbatch(std::string_view type) {
    return type != "UNSHARD" && type != "RESHARD" && type != "REDUCE_GRAD";
}

class CsvImporter {
  public:
    CsvImporter(std::string_view text, const std::string& file, const ScheduleFileLimits& limits)
        : text_(text), file_(file), limits_(limits), cursor_(text) {
        positions_.locate = [this](std::size_t, std::size_t offset) {
            return cursor_.position(offset);
        };
    }
    CsvImporter(const CsvImporter&) = delete;  // positions_.locate refers to this
    CsvImporter& operator=(const CsvImporter&) = delete;

    PytorchCsvImport run(const std::string& name);

  private:
    [[noreturn]] void fail(std::size_t offset, const std::string& problem) const {
        throw fileio::ParseError(file_, cursor_.position(offset), problem);
    }

    // A decimal below `limit` at s[i]; -1 if there is no digit.
    long long read_number(std::string_view s, std::size_t& i, long long limit,
                          std::string_view what, std::size_t offset) const {
        const std::size_t start = i;
        const long long value = detail::read_decimal(s, i, limit);
        if (value == detail::too_big)
            fail(offset, fmt::format("{} number {} is over the limit of {}", what,
                                     fileio::quote_excerpt(s.substr(start), 20), limit - 1));
        return value;
    }

    Action parse_action(std::string_view s, std::size_t offset) const;
    void add_cell(int rank, const detail::CsvCell& cell);
    // `text`: the action as written (a communication is quoted in messages by it).
    void add_action(int rank, const Action& action, std::size_t offset, std::string_view text);
    void infer_placement(PytorchCsvImport& result) const;
    void check_communications(int microbatches) const;

    std::string_view text_;
    const std::string& file_;
    const ScheduleFileLimits& limits_;
    // Annotations keep positions, in file order: one scan in all, not one per annotation.
    mutable fileio::PositionCursor cursor_;

    std::vector<std::vector<Op>> ops_;
    detail::OpPositions positions_;
    std::vector<CsvAnnotation> annotations_;
    std::vector<Communication> communications_;
    std::vector<int> stage_rank_;              // −1: not seen yet
    std::vector<std::size_t> stage_first_at_;  // offset of the stage's first op
    int max_microbatch_ = -1;
    std::size_t total_ops_ = 0;
};

Action CsvImporter::parse_action(std::string_view s, std::size_t offset) const {
    const long long stage_limit = static_cast<long long>(limits_.max_devices) * limits_.max_chunks;
    std::size_t i = 0;
    const long long stage = read_number(s, i, stage_limit, "stage", offset);
    if (stage < 0)
        fail(offset, fmt::format("expected {}, got {}", action_shape, fileio::quote_excerpt(s)));
    std::string_view type;
    for (std::string_view candidate : action_types)
        if (s.substr(i).substr(0, candidate.size()) == candidate) type = candidate;
    if (type.empty())
        fail(offset, fmt::format("expected {}, got {}", action_shape, fileio::quote_excerpt(s)));
    i += type.size();
    const long long mb = read_number(s, i, limits_.max_microbatches, "microbatch", offset);
    if (i != s.size())
        fail(offset, fmt::format("unexpected {} after action '{}' (PyTorch's loader would "
                                 "silently drop it)",
                                 fileio::quote_excerpt(s.substr(i)), s.substr(0, i)));
    Action action;
    action.stage = static_cast<int>(stage);
    action.type = type;
    action.compute = compute_pass(type, action.op.pass);
    if (action.compute && mb < 0)
        fail(offset, fmt::format("expected a microbatch number after '{}': compute actions "
                                 "name their microbatch",
                                 s));
    action.op.stage = static_cast<int>(stage);
    action.op.microbatch = static_cast<int>(mb);
    return action;
}

void CsvImporter::add_action(int rank, const Action& action, std::size_t offset,
                             std::string_view text) {
    const auto stage = static_cast<std::size_t>(action.stage);
    if (!action.compute) {
        communications_.push_back(Communication{rank, action, offset, std::string(text)});
        return;
    }
    if (stage >= stage_rank_.size()) {
        stage_rank_.resize(stage + 1, -1);
        stage_first_at_.resize(stage + 1, 0);
    }
    if (stage_rank_[stage] < 0) {
        stage_rank_[stage] = rank;
        stage_first_at_[stage] = offset;
    } else if (stage_rank_[stage] != rank) {
        const fileio::TextPosition first = cursor_.position(stage_first_at_[stage]);
        fail(offset, fmt::format("stage {} runs on rank {} here but on rank {} at line {}, "
                                 "column {}: a stage belongs to one rank",
                                 action.stage, rank, stage_rank_[stage], first.line, first.column));
    }
    if (++total_ops_ > limits_.max_ops)
        fail(offset, fmt::format("more than {} ops in the file, the limit", limits_.max_ops));
    max_microbatch_ = std::max(max_microbatch_, action.op.microbatch);
    ops_[static_cast<std::size_t>(rank)].push_back(action.op);
    positions_.offsets[static_cast<std::size_t>(rank)].push_back(offset);
}

void CsvImporter::add_cell(int rank, const detail::CsvCell& cell) {
    const std::string_view s = cell.text;
    const std::size_t offset = cell.content_offset;
    auto annotate = [&] {
        const fileio::TextPosition where = cursor_.position(offset);
        annotations_.push_back(
            CsvAnnotation{rank, static_cast<int>(ops_[static_cast<std::size_t>(rank)].size()),
                          std::string(s), where.line, where.column});
    };
    const std::size_t close = s.find(')');
    if (s.front() != '(' || close == std::string_view::npos) {
        const Action action = parse_action(s, offset);
        if (!action.compute) annotate();
        add_action(rank, action, offset, s);
        return;
    }
    // "(0F1;1B0)OVERLAP_F_B": sub-actions up to the first ')', then the group's type.
    const std::string_view type = s.substr(close + 1);
    if (type != overlap_type) {
        const bool known =
            std::find(action_types.begin(), action_types.end(), type) != action_types.end();
        fail(offset, fmt::format("expected {} after a parenthesized group, got {}{}", overlap_type,
                                 fileio::quote_excerpt(type),
                                 known ? " (PyTorch runs only OVERLAP_F_B groups)" : ""));
    }
    annotate();
    std::size_t start = 1;
    int subs = 0;
    while (start <= close) {
        std::size_t end = s.find(';', start);
        if (end == std::string_view::npos || end > close) end = close;
        const std::string_view part = detail::strip_python_space(s.substr(start, end - start));
        if (!part.empty()) {
            const std::size_t part_offset =
                offset + static_cast<std::size_t>(part.data() - s.data());
            const Action action = parse_action(part, part_offset);
            add_action(rank, action, part_offset, part);
            ++subs;
        }
        start = end + 1;
    }
    if (subs == 0) fail(offset, "expected actions inside the OVERLAP_F_B group, got none");
}

void CsvImporter::infer_placement(PytorchCsvImport& result) const {
    Schedule& schedule = result.schedule;
    const int ranks = schedule.devices;
    const int stages = static_cast<int>(stage_rank_.size());
    for (int s = 0; s < stages; ++s)
        if (stage_rank_[static_cast<std::size_t>(s)] < 0)
            throw fileio::ParseError(
                file_, fileio::TextPosition{},
                fmt::format("stage {} runs on no rank, but stage {} does: stages "
                            "must be numbered 0..{} without gaps",
                            s, stages - 1, stages - 1));
    std::vector<int> held(static_cast<std::size_t>(ranks), 0);
    for (int s = 0; s < stages; ++s)
        ++held[static_cast<std::size_t>(stage_rank_[static_cast<std::size_t>(s)])];
    for (int r = 0; r < ranks; ++r) {
        if (held[static_cast<std::size_t>(r)] * ranks == stages) continue;
        throw fileio::ParseError(
            file_, positions_.at(static_cast<std::size_t>(r), 0),
            fmt::format("rank {} runs {} stage{}, but {} stages over {} ranks needs the same "
                        "number on every rank",
                        r, held[static_cast<std::size_t>(r)],
                        held[static_cast<std::size_t>(r)] == 1 ? "" : "s", stages, ranks));
    }
    schedule.chunks = stages / ranks;
    if (schedule.chunks > limits_.max_chunks)
        throw fileio::ParseError(file_, fileio::TextPosition{},
                                 fmt::format("{} stages per rank, more than the limit of {}",
                                             schedule.chunks, limits_.max_chunks));
    schedule.stage_device = stage_rank_;
    result.placement = classify_placement(schedule.stage_device, ranks);
}

// What the compute actions fixed, the communication actions must agree with: their stage is
// one of the rank's own, and a send or receive names a microbatch the schedule has.
void CsvImporter::check_communications(int microbatches) const {
    const auto stages = static_cast<int>(stage_rank_.size());
    for (const Communication& c : communications_) {
        const Action& a = c.action;
        if (a.stage >= stages)
            fail(c.offset, fmt::format("'{}' is for stage {}, which no compute action runs "
                                       "(stages 0..{})",
                                       c.text, a.stage, stages - 1));
        const int owner = stage_rank_[static_cast<std::size_t>(a.stage)];
        if (owner != c.rank)
            fail(c.offset, fmt::format("'{}' on rank {} is for stage {}, which runs on rank {}",
                                       c.text, c.rank, a.stage, owner));
        const int mb = a.op.microbatch;
        if (!takes_microbatch(a.type) && mb >= 0)
            fail(c.offset, fmt::format("'{}': {} acts on the stage as a whole and names no "
                                       "microbatch (PyTorch writes {}{})",
                                       c.text, a.type, a.stage, a.type));
        if (takes_microbatch(a.type) && mb < 0)
            fail(c.offset, fmt::format("expected a microbatch number after '{}': {} names the "
                                       "microbatch it moves",
                                       c.text, a.type));
        if (takes_microbatch(a.type) && mb >= microbatches)
            fail(c.offset, fmt::format("'{}' moves microbatch {}, but the compute actions run "
                                       "microbatches 0..{}",
                                       c.text, mb, microbatches - 1));
    }
}

PytorchCsvImport CsvImporter::run(const std::string& name) {
    if (text_.size() > limits_.max_bytes)
        throw fileio::ParseError(file_, fileio::TextPosition{},
                                 fmt::format("file is {} bytes, more than the limit of {}",
                                             text_.size(), limits_.max_bytes));
    // What the cells and the ops will take, before they are split: the cells with text
    // between commas and line ends (empty ones, idle steps, are dropped), each held as a cell
    // and as an op, and one more op per ';' of an OVERLAP_F_B group.
    const std::size_t cells = detail::count_csv_cells(text_);
    detail::check_read_memory(file_, cells, 1.0, sizeof(detail::CsvCell));
    const std::vector<detail::CsvRow> rows =
        detail::split_csv(text_, file_, static_cast<std::size_t>(limits_.max_devices));
    if (rows.empty())
        throw fileio::ParseError(file_, fileio::TextPosition{},
                                 "empty file: expected one row of actions per rank");
    ops_.resize(rows.size());
    positions_.offsets.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
        // At most one op per cell: the lists held once, not grown by doubling.
        ops_[r].reserve(rows[r].cells.size());
        positions_.offsets[r].reserve(rows[r].cells.size());
        for (const detail::CsvCell& cell : rows[r].cells)
            add_cell(static_cast<int>(r), cell);
        if (ops_[r].empty())
            fail(rows[r].offset,
                 fmt::format("rank {} has no compute actions: every rank runs at least one "
                             "stage (a blank line is a rank with no actions)",
                             r));
    }
    PytorchCsvImport result;
    Schedule& schedule = result.schedule;
    schedule.name = name;
    schedule.devices = static_cast<int>(rows.size());
    schedule.microbatches = max_microbatch_ + 1;
    infer_placement(result);
    check_communications(schedule.microbatches);
    schedule.device_ops = std::move(ops_);
    result.annotations = std::move(annotations_);
    detail::check_op_budget(schedule, total_ops_, file_);
    detail::validate_parsed(schedule, positions_, file_,
                            "pipesim's BW is this file's B, a full backward, and its B this "
                            "file's I, the input gradient: '0B1' is BW(mb 1, stage 0)");
    return result;
}

}  // namespace

PytorchCsvImport parse_pytorch_csv(std::string_view text, const std::string& file,
                                   const std::string& name, const ScheduleFileLimits& limits) {
    return CsvImporter(text, file, limits).run(name);
}

std::string schedule_to_pytorch_csv(const Schedule& schedule) {
    require_valid(schedule);
    if (!schedule.microbatch_stages.empty())
        throw std::invalid_argument(fmt::format(
            "schedule '{}' gives microbatches their own stage ranges (two model copies, as in "
            "DualPipe); PyTorch's pipelining CSV cannot express that: save it as .json",
            schedule.name));
    // Unit steps: an op runs one step after its device's previous op and after its inputs.
    const int stages = schedule.stages();
    std::vector<std::int64_t> step(dense_op_count(schedule.microbatches, stages), 0);
    std::vector<std::int64_t> device_next(static_cast<std::size_t>(schedule.devices), 0);
    std::vector<std::vector<std::int64_t>> op_step(static_cast<std::size_t>(schedule.devices));
    for (int d = 0; d < schedule.devices; ++d)
        op_step[static_cast<std::size_t>(d)].resize(
            schedule.device_ops[static_cast<std::size_t>(d)].size());
    DependencyWalker walker(schedule);
    walker.run([&](int device, int position, const Op& op, const Predecessors& preds) {
        const auto d = static_cast<std::size_t>(device);
        std::int64_t at = device_next[d];
        for (int k = 0; k < preds.count; ++k)
            at = std::max(at,
                          step[dense_op_index(preds.op[static_cast<std::size_t>(k)], stages)] + 1);
        step[dense_op_index(op, stages)] = at;
        op_step[d][static_cast<std::size_t>(position)] = at;
        device_next[d] = at + 1;
    });
    std::string out;
    for (int d = 0; d < schedule.devices; ++d) {
        const auto& ops = schedule.device_ops[static_cast<std::size_t>(d)];
        const auto& steps = op_step[static_cast<std::size_t>(d)];
        std::int64_t column = 0;
        for (std::size_t i = 0; i < ops.size(); ++i) {
            for (; column < steps[i]; ++column)
                out += ',';  // idle steps: empty cells
            out +=
                fmt::format("{}{}{}", ops[i].stage, pytorch_letter(ops[i].pass), ops[i].microbatch);
            if (i + 1 < ops.size()) {
                out += ',';
                ++column;
            }
        }
        out += '\n';
    }
    return out;
}

}  // namespace pipesim
