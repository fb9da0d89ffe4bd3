#pragma once
// Published closed forms next to what pipesim measures.

#include <optional>

#include "analysis/run.hpp"
#include "analysis/spec.hpp"

namespace pipesim::analysis {

/// DeepSeek's bubble of DualPipe and DualPipeV (github.com/deepseek-ai/DualPipe README,
/// "Pipeline Bubbles and Memory Usage Comparison"): (PP/2 − 1)(F&B + B − 3W), with F a
/// forward chunk, B a full backward chunk, W its weight part and F&B an overlapped pair, all
/// times of one chunk; PP is the number of pipeline stages (p for DualPipe, whose chunks are
/// full stages; 2p for DualPipeV on p devices).
struct PublishedBubble {
    int pp = 0;           ///< PP
    double forward = 0;   ///< F: the mean chunk forward plus its all-to-all
    double backward = 0;  ///< B: the mean chunk B + W plus its all-to-all
    double weight = 0;    ///< W: the mean chunk W
    double pair = 0;      ///< F&B: F + B less the all-to-all the overlap factor hides
    double bubble = 0;    ///< (PP/2 − 1)(F&B + B − 3W)
};

/// The published bubble for a run of `dualpipe` or `dualpipe-v` (by schedule name), with the
/// chunk times the replay used (mean over virtual stages when they differ), the spec's
/// all-to-all time and overlap factor; nothing for other schedules, nor where the formula
/// gives a negative idle time (3W above F&B + B: it does not apply there).
std::optional<PublishedBubble> published_bubble(const Analysis& a, const PipelineSpec& spec);

}  // namespace pipesim::analysis
