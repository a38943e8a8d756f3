// CLI11 definitions of the run options (see cli_options.h), and the values lmprof parses
// itself so that every refusal names the flag, the value and the rule: CLI11's own
// conversion says only "Could not convert", reads '' as 0, -1 as 2^64-1 for an unsigned
// seed, and a list of nothing (--models ,) swallows the next flag as a list entry.

#include "cli_options.h"

#include "lmprof/ui/app.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>
#include <variant>

namespace lmprof::app {

namespace {

[[noreturn]] void refuse(const std::string& flag, const std::string& reason) {
    throw CLI::ValidationError(flag, reason);
}

std::string quoted(const std::string& text) {
    return "'" + text + "'";
}

// One number of type T from the whole of `text` (no spaces, no trailing characters).
template <typename T>
T parseNumber(const std::string& flag, const std::string& text) {
    if (text.empty()) {
        refuse(flag, "needs a value, got ''");
    }
    T value{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if constexpr (std::is_integral_v<T>) {
        if (std::is_unsigned_v<T> && text.front() == '-') {
            refuse(flag, quoted(text) + " is negative; it must be 0 or more");
        }
        if (ec == std::errc::result_out_of_range) {
            refuse(flag, quoted(text) + " is out of range (" +
                             std::to_string(std::numeric_limits<T>::min()) + " to " +
                             std::to_string(std::numeric_limits<T>::max()) + ")");
        }
        if (ec != std::errc{} || ptr != end) {
            refuse(flag, quoted(text) + " is not a whole number");
        }
    } else {
        if (ec != std::errc{} || ptr != end || !std::isfinite(value)) {
            refuse(flag, quoted(text) + " is not a finite number");
        }
    }
    return value;
}

// A comma-separated list: no empty entry, each parsed as T (a string is taken as it is).
template <typename T>
std::vector<T> parseList(const std::string& flag, const std::string& text) {
    std::vector<T> out;
    size_t start = 0;
    for (size_t i = 1;; ++i) {
        const size_t comma = text.find(',', start);
        const std::string item =
            text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) {
            refuse(flag, "entry " + std::to_string(i) + " of " + quoted(text) +
                             " is empty (give a comma-separated list such as a,b)");
        }
        if constexpr (std::is_same_v<T, std::string>) {
            out.push_back(item);
        } else {
            out.push_back(parseNumber<T>(flag, item));
        }
        // A repeat would run (or show) the same thing twice.
        if (std::find(out.begin(), out.end() - 1, out.back()) != out.end() - 1) {
            refuse(flag, "entry " + std::to_string(i) + " of " + quoted(text) + " repeats " +
                             quoted(item) + " (each entry once)");
        }
        if (comma == std::string::npos) {
            return out;
        }
        start = comma + 1;
    }
}

template <typename T>
std::string shown(const T& value) {
    std::ostringstream s;
    s << value;
    return s.str();
}
template <typename T>
std::string shown(const std::vector<T>& values) {
    std::string out;
    for (const auto& v : values) {
        out += (out.empty() ? "" : ",") + shown(v);
    }
    return out;
}

// The first name of an option ("--quiet,-q" -> "--quiet").
std::string firstName(const std::string& names) {
    return names.substr(0, names.find(','));
}

} // namespace

template <typename T>
CLI::Option* addNumber(CLI::App& cmd, const std::string& name, T& target, const std::string& help) {
    const std::string flag = firstName(name);
    return cmd
        .add_option_function<std::string>(
            name, [&target, flag](const std::string& s) { target = parseNumber<T>(flag, s); },
            help + " [" + shown(target) + "]")
        ->type_name(std::is_integral_v<T> ? "INT" : "NUMBER");
}

template <typename T>
CLI::Option* addList(CLI::App& cmd, const std::string& name, std::vector<T>& target,
                     const std::string& help) {
    const std::string flag = firstName(name);
    return cmd
        .add_option_function<std::string>(
            name, [&target, flag](const std::string& s) { target = parseList<T>(flag, s); },
            target.empty() ? help : help + " [" + shown(target) + "]")
        ->type_name("LIST");
}

CLI::Option* addText(CLI::App& cmd, const std::string& name, std::string& target,
                     const std::string& help) {
    const std::string flag = firstName(name);
    return cmd.add_option_function<std::string>(
        name,
        [&target, flag](const std::string& s) {
            if (s.empty()) {
                refuse(flag, "needs a value, got ''");
            }
            target = s;
        },
        target.empty() ? help : help + " [" + target + "]");
}

template <typename T>
CLI::Option* addNumberIn(CLI::App& cmd, const std::string& name, T& target, T lo, T hi,
                         const std::string& help) {
    const std::string flag = firstName(name);
    return cmd
        .add_option_function<std::string>(
            name,
            [&target, flag, lo, hi](const std::string& s) {
                const T value = parseNumber<T>(flag, s);
                if (value < lo || value > hi) {
                    refuse(flag, "must be between " + shown(lo) + " and " + shown(hi) + ", got " +
                                     quoted(s));
                }
                target = value;
            },
            help + " [" + shown(target) + "]")
        ->type_name(std::is_integral_v<T> ? "INT" : "NUMBER");
}

CLI::Option* addChoice(CLI::App& cmd, const std::string& name, std::string& target,
                       const std::vector<std::string>& choices, const std::string& help) {
    const std::string flag = firstName(name);
    return cmd
        .add_option_function<std::string>(
            name,
            [&target, flag, choices](const std::string& s) {
                if (std::find(choices.begin(), choices.end(), s) == choices.end()) {
                    refuse(flag, quoted(s) + " is not one of " + shown(choices));
                }
                target = s;
            },
            help)
        ->type_name(shown(choices));
}

CLI::Option* addPixelSize(CLI::App& cmd, const std::string& name, PixelSize& target, int minSide,
                          const std::string& help) {
    const std::string flag = firstName(name);
    return cmd
        .add_option_function<std::string>(
            name,
            [&target, flag, minSide](const std::string& s) {
                const size_t x = s.find('x');
                if (x == std::string::npos) {
                    refuse(flag, quoted(s) + " is not a size WxH such as 1280x720");
                }
                constexpr int kMaxSide = ui::kMaxWindowSide;
                const auto side = [&](const std::string& text, const char* what) {
                    const int v = parseNumber<int>(flag + " (" + what + ")", text);
                    if (v < minSide || v > kMaxSide) {
                        refuse(flag, std::string(what) + " must be between " +
                                         std::to_string(minSide) + " and " +
                                         std::to_string(kMaxSide) + ", got " + quoted(text));
                    }
                    return v;
                };
                target = {side(s.substr(0, x), "width"), side(s.substr(x + 1), "height")};
            },
            help)
        ->type_name("WxH");
}

template CLI::Option* addNumberIn(CLI::App&, const std::string&, int&, int, int,
                                  const std::string&);
template CLI::Option* addNumberIn(CLI::App&, const std::string&, int64_t&, int64_t, int64_t,
                                  const std::string&);
template CLI::Option* addNumberIn(CLI::App&, const std::string&, double&, double, double,
                                  const std::string&);

namespace {
// A number that may be left out (the custom model's dimensions): given, even as 0, is
// different from absent.
CLI::Option* addOptionalNumber(CLI::App& cmd, const std::string& name,
                               std::optional<int64_t>& target, const std::string& help) {
    const std::string flag = firstName(name);
    return cmd
        .add_option_function<std::string>(
            name, [&target, flag](const std::string& s) { target = parseNumber<int64_t>(flag, s); },
            help)
        ->type_name("INT");
}
} // namespace

template CLI::Option* addNumber(CLI::App&, const std::string&, int&, const std::string&);
template CLI::Option* addNumber(CLI::App&, const std::string&, int64_t&, const std::string&);
template CLI::Option* addNumber(CLI::App&, const std::string&, uint64_t&, const std::string&);
template CLI::Option* addNumber(CLI::App&, const std::string&, double&, const std::string&);
template CLI::Option* addList(CLI::App&, const std::string&, std::vector<int>&, const std::string&);
template CLI::Option* addList(CLI::App&, const std::string&, std::vector<int64_t>&,
                              const std::string&);
template CLI::Option* addList(CLI::App&, const std::string&, std::vector<std::string>&,
                              const std::string&);

void parseCommandLine(CLI::App& app, int argc, char** argv) {
    // Every option takes its last value, so that parsing succeeds and a repeat is refused
    // below with both values named (CLI11 would say "At Most 1 required but received 2").
    std::vector<CLI::App*> commands{&app};
    for (CLI::App* sub : app.get_subcommands({})) {
        commands.push_back(sub);
    }
    for (CLI::App* cmd : commands) {
        for (CLI::Option* opt : cmd->get_options()) {
            // (Not a positional that takes many values, e.g. merge's files.)
            if (opt->get_type_size() > 0 && opt->get_items_expected_max() <= 1) {
                opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
            }
        }
    }
    app.parse(argc, argv);
    for (const CLI::App* cmd : commands) {
        if (cmd != &app && !cmd->parsed()) {
            continue;
        }
        for (const CLI::Option* opt : cmd->get_options()) {
            if (opt->get_type_size() > 0 && opt->get_items_expected_max() <= 1 &&
                opt->count() > 1) {
                std::string values;
                for (const auto& v : opt->results()) {
                    values += (values.empty() ? "" : ", ") + quoted(v);
                }
                throw CLI::ValidationError(
                    opt->get_name(),
                    "given " + std::to_string(opt->count()) + " times (" + values +
                        "); give it once" +
                        (opt->get_type_name() == "LIST" ? " with a comma-separated list" : ""));
            }
        }
    }
}

void addCommonOptions(CLI::App& cmd, CommonOptions& o, bool sweepLists) {
    addOptionalNumber(cmd, "--d-model", o.dModel, "custom model: d_model");
    addOptionalNumber(cmd, "--d-ff", o.dFf, "custom model: feed-forward width");
    addOptionalNumber(cmd, "--layers", o.layers, "custom model: number of blocks");
    addOptionalNumber(cmd, "--heads", o.heads, "custom model: attention heads");
    addNumber(cmd, "--vocab", o.vocab, "vocabulary size");
    addNumber(cmd, "--steps", o.steps, "measured steps");
    addText(cmd, "--device", o.device, "auto|cpu|cuda[:i]");
    addText(cmd, "--json", o.jsonPath, "write the result set to FILE (atomically)");
    addText(cmd, "--format", o.format, "table|markdown|csv");
    cmd.add_flag("--quiet,-q", o.quiet, "no per-step progress on stderr");
    for (const engine::ValueField& f : engine::valueFields()) {
        if (sweepLists && f.sweepAxis) {
            addList(cmd, f.flag, o.valueLists[f.key],
                    f.help + "; a comma-separated list sweeps it [" + shown(f.number(o.values)) +
                        "]");
            continue;
        }
        std::visit(
            [&](auto member) {
                auto& target = o.values.*member;
                if constexpr (std::is_same_v<std::decay_t<decltype(target)>, bool>) {
                    cmd.add_flag(f.flag, target, f.help);
                } else {
                    addNumber(cmd, f.flag, target, f.help);
                }
            },
            f.member);
    }
    // One value for run, a comma-separated list for sweep (checked by each command).
    for (const engine::ChoiceField& f : engine::choiceFields()) {
        std::string names;
        for (const auto& v : f.values) {
            names += (names.empty() ? "" : "|") + v;
        }
        addList(cmd, f.flag, o.choices[f.key], f.help + " (default " + f.values.front() + ")")
            ->type_name(names);
    }
    auto* ops = cmd.add_flag("--profile-ops", o.profileOps,
                             "profile every op (and GPU kernel) of chosen steps by region");
    addNumber(cmd, "--profile-step", o.profileStep,
              "first step to profile (-1: the first after the warmup)")
        ->needs(ops);
    addNumber(cmd, "--profile-steps", o.profileSteps, "number of steps to profile")->needs(ops);
    addText(cmd, "--profile-trace", o.profileTrace,
            "Chrome trace of the profiled steps ({run}: the run id; default: beside "
            "--json, else {run}.trace.json)")
        ->needs(ops);
}

void addConnectOptions(CLI::App& cmd, CommonOptions& o) {
    addConnectOptions(cmd, o.connect, o.tokenFile);
}

void addConnectOptions(CLI::App& cmd, std::string& connect, std::string& tokenFile) {
    addText(cmd, "--connect", connect,
            "HOST:PORT of an lmprof-cli serve to run on (docs/REMOTE.md), e.g. through "
            "ssh -L 7377:127.0.0.1:7377 gpu-box");
    addText(cmd, "--token-file", tokenFile,
            "the server's token (default: <config dir>/server/token, as serve makes it)");
}

void addRunOptions(CLI::App& cmd, RunOptions& o) {
    addText(cmd, "--model", o.model, "tiny|small|medium|large|xl|2.7B|custom");
    addNumber(cmd, "--ctx", o.ctx, "context length");
    addNumber(cmd, "--batch", o.common.batch, "batch size");
    addText(cmd, "--precision", o.precision, engine::joinNames(engine::kPrecisions, "|"));
    addText(cmd, "--mode", o.mode, engine::joinNames(engine::kModes, "|"));
    addNumber(cmd, "--warmup", o.common.warmup, "warmup steps (recorded, not summarised)");
    addText(cmd, "--memory-snapshot", o.snapshotPath,
            "record allocations of chosen steps to FILE (CUDA: memory_viz pickle; CPU: "
            "JSON allocation trace)");
    addNumber(cmd, "--snapshot-step", o.snapshotStep,
              "first step to record (-1: the last warmup step)");
    addNumber(cmd, "--snapshot-steps", o.snapshotSteps, "number of steps to record");
    addNumber(cmd, "--snapshot-max-entries", o.snapshotMaxEntries,
              "most allocation events kept in the snapshot");
    addCommonOptions(cmd, o.common);
}

bool WindowOptions::configGiven() const {
    return std::any_of(configOptions.begin(), configOptions.end(),
                       [](const CLI::Option* option) { return option->count() > 0; });
}

void addWindowOptions(CLI::App& cmd, WindowOptions& o) {
    size_t first = cmd.get_options().size();
    const auto keepConfigOptions = [&] { // those added since `first`
        const auto all = cmd.get_options();
        o.configOptions.insert(o.configOptions.end(), all.begin() + static_cast<long>(first),
                               all.end());
    };
    addRunOptions(cmd, o.run);
    keepConfigOptions();
    addConnectOptions(cmd, o.run.common);
    cmd.add_flag("--autorun", o.autorun, "start the configured run at launch");
    addText(cmd, "--screenshot", o.screenshot, "write a PNG once the run has finished and drawn");
    cmd.add_flag("--exit-when-done", o.exitWhenDone, "exit after the autorun run (and screenshot)");
    addText(cmd, "--frame-stats", o.frameStats, "write per-frame work times as JSON at exit");
    addText(cmd, "--layout-report", o.layoutReport,
            "write the last frame's plot sizes and windows in front as JSON at exit");
    auto* restore =
        cmd.add_flag("--restore-last", o.restoreLast, "restore the last session's runs");
    cmd.add_flag("--discard-last", o.discardLast, "do not offer the last session's runs")
        ->excludes(restore);
    addText(cmd, "--save-on-exit", o.saveOnExit, "save the finished runs to FILE at exit");
    addList(cmd, "--show", o.show, "bring these windows to the front, e.g. Summary,Heatmap");
    addList(cmd, "--export-plots", o.exportPlots,
            "after the autorun, save these charts as PNG, e.g. step-times,memory");
    addText(cmd, "--export-dir", o.exportDir, "folder for --export-plots");
    addPixelSize(cmd, "--export-size", o.exportSize, 64,
                 "size of each exported chart PNG, e.g. 1200x600 [as drawn]");
    // The stage for demos and recordings (docs/DEMO.md).
    addChoice(cmd, "--theme", o.theme, {"dark", "light"},
              "theme for this launch (not saved) [the View menu's choice]");
    addPixelSize(cmd, "--window-size", o.windowSize, ui::kMinWindowSide,
                 "window size, e.g. 1280x720, laid out afresh (the saved layout is left alone) "
                 "[1600x1000]");
    addList(cmd, "--open", o.open, "open these result sets at launch and overlay their runs");
    addNumberIn(cmd, "--font-scale", o.fontScale, 0.5, 4.0, "scale of all text");
    addNumberIn(cmd, "--max-fps", o.maxFps, 1, 240,
                "frame rate cap while a run streams (an idle window draws on input only; during "
                "a CPU run, while the window is not in use, 2 with software OpenGL, else 10)");
    addText(cmd, "--demo", o.demo, "play this demo script (JSON, docs/DEMO.md)");
    addText(cmd, "--record", o.record,
            "encode the window's frames to this MP4 with ffmpeg (one frame per 1/fps s of "
            "recording time)");
    addNumberIn(cmd, "--fps", o.fps, 1, 120, "frame rate of --record");
    cmd.add_option("command", o.watchCommand,
                   "after --: a PyTorch training script to run and watch live, e.g. -- python "
                   "train.py (docs/WATCH.md)");
    first = cmd.get_options().size();
    addNumberIn(cmd, "--world-size", o.worldSize, 0, engine::kMaxWorldSize,
                "configure a data-parallel run on this many local ranks (0: one process)");
    addChoice(cmd, "--strategy", o.strategy, {"naive", "flat", "bucketed"},
              "with --world-size: how gradients are all-reduced [naive]");
    addChoice(cmd, "--backend", o.backend, {"gloo", "nccl"},
              "with --world-size: c10d process group [gloo]");
    keepConfigOptions();
}

} // namespace lmprof::app
