// The window's views, one per file in this directory, each with a draw(). A view owns its
// own UI state (scratch buffers, edit fields) as members.
#pragma once

#include "lmprof/ui/decimate.h"
#include "view_context.h"

#include <string>

namespace lmprof::ui {

class ConfigView {
public:
    void draw(ViewContext& ctx);

private:
    int m_contextChoice = 0; // index into the context presets, last = custom
};

class StepTimesView {
public:
    void draw(ViewContext& ctx);

private:
    Decimated m_scratch;
    Decimated m_scratchHigh;
};

class HistogramView {
public:
    void draw(ViewContext& ctx);

private:
    std::vector<double> m_values;
};

class MemoryView {
public:
    void draw(ViewContext& ctx);

private:
    Decimated m_scratch;
};

class ThroughputView {
public:
    void draw(ViewContext& ctx);

private:
    Decimated m_scratch;
};

class RunsTableView {
public:
    void draw(ViewContext& ctx);
};

class FilesView {
public:
    void draw(ViewContext& ctx);
    void save(ViewContext& ctx, const std::string& path);
    void open(ViewContext& ctx, const std::string& path);

private:
    char m_path[1024] = "";
    bool m_pathInitialised = false;
};

// Shared drawing helpers for the plot views.
namespace plot {
// Draws ys against xs, decimated to the plot's pixel width when long.
void line(const char* label, const std::vector<double>& xs, const std::vector<double>& ys,
          Decimated& scratch);
// The area between lo and hi (a smooth band such as mean ± std), subsampled by stride to
// about two points per pixel column when long.
void shaded(const char* label, const std::vector<double>& xs, const std::vector<double>& lo,
            const std::vector<double>& hi, float fillAlpha, Decimated& scratchLo,
            Decimated& scratchHi);
// A translucent vertical band from x0 to x1 across the whole plot (warmup, phases).
void band(double x0, double x1, unsigned int color);
} // namespace plot

} // namespace lmprof::ui
