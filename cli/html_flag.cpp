#include "html_flag.hpp"

#include "viz/html_report.hpp"
#include "viz_flags.hpp"

namespace pipesim::cli {

const std::string html_flag_help =
    "  --html FILE.html      a self-contained HTML report: table, timelines, memory, inputs\n";

bool read_html_flag(const std::string& flag, ArgReader& reader, std::string& path) {
    if (flag != "--html") return false;
    reader.claim_once("--html", flag);
    path = reader.value(flag);
    return true;
}

void check_html_flag(const std::string& path, const viz::VizOutputs& outputs,
                     const std::string& save_file, const std::vector<std::string>& inputs) {
    if (path.empty()) return;
    viz::check_html_report("--html", path);
    auto files = output_files(outputs);
    files.emplace_back("--save", save_file);
    files.emplace_back("--html", path);
    check_output_files(files, inputs);
}

}  // namespace pipesim::cli
