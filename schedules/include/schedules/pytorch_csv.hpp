#pragma once
// PyTorch pipelining CSV (torch.distributed.pipelining): one row per rank, one cell per
// action. Import reads both of PyTorch's flavours; export writes the compute-only flavour.
// Mapping (see docs/schedule-format.md): PyTorch F ↔ F, I ↔ B, W ↔ W, B (full backward) ↔ BW.

#include <string>
#include <string_view>
#include <vector>

#include "schedules/placement.hpp"
#include "schedules/schedule.hpp"
#include "schedules/schedule_file.hpp"

namespace pipesim {

/// A non-compute action of the CSV (SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD,
/// REDUCE_GRAD) or an OVERLAP_F_B group, kept as written: pipesim's engines derive
/// communication from the dependencies, so these only annotate the schedule.
struct CsvAnnotation {
    int rank = 0;
    /// Index in the rank's op list of the first compute op after the annotation (for a group,
    /// of its first sub-action).
    int before_op = 0;
    std::string action;  ///< the cell, e.g. "1RECV_F3" or "(0F1;1B0)OVERLAP_F_B"
    int line = 0;        ///< where the cell starts in the file (from 1)
    int column = 0;

    bool operator==(const CsvAnnotation&) const = default;
};

/// What an import found.
struct PytorchCsvImport {
    Schedule schedule;
    /// The placement inferred from which rank runs each stage.
    PlacementKind placement = PlacementKind::custom;
    /// Communication actions and overlap groups, in file order.
    std::vector<CsvAnnotation> annotations;
};

/// Parses a PyTorch pipelining CSV and validates the schedule. Row r is rank r's actions in
/// order; empty cells are idle steps. Cells follow PyTorch's action grammar
/// STAGE TYPE [MICROBATCH] (e.g. "2F0", "1I3", "0W1", "3B2", "1SEND_F0", "0UNSHARD") or
/// "(A;B;...)OVERLAP_F_B". The number of stages, microbatches and the stage → rank placement
/// are inferred; each stage must run on one rank and every rank hold the same number of
/// stages. The schedule is named `name`. Throws ParseError "file:line:column: what was
/// expected" for anything PyTorch's loader would reject, for text PyTorch would silently
/// ignore (see the docs), for files over the limits, and (at the offending cell) for a
/// schedule validate() rejects.
PytorchCsvImport parse_pytorch_csv(std::string_view text, const std::string& file,
                                   const std::string& name = "schedule",
                                   const ScheduleFileLimits& limits = {});

/// The schedule as compute-only PyTorch CSV, one row per device, "\n" line ends. Each op
/// sits in the column of the earliest unit step at which its inputs are ready (every action
/// one step), with empty cells for idle steps, as PyTorch's own schedules are laid out: a
/// lock-step runtime finds each op's input sent in an earlier step. Throws InvalidSchedule if
/// the schedule is invalid.
std::string schedule_to_pytorch_csv(const Schedule& schedule);

}  // namespace pipesim
