// A chart's state between frames lives in its ImGui context's chart book (chart_book.h):
// a note given in one frame is laid out above the data from the next; a legend hidden for
// want of width comes back once it fits, and one the user hid stays hidden; a second
// context (a chart export's) shares nothing with the first. Real ImGui and ImPlot frames,
// without a display.

#include "views/chart_book.h"
#include "views/plot_helpers.h"

#include <gtest/gtest.h>
#include <imgui.h>
#include <implot.h>
#include <implot_internal.h>
#include <string>
#include <vector>

using namespace lmprof;
using ui::ChartBook;

namespace {

// An ImGui and an ImPlot context, current while it lives, with a display of `width` pixels.
struct Contexts {
    ImGuiContext* imgui = ImGui::CreateContext();
    ImPlotContext* implot = ImPlot::CreateContext();
    explicit Contexts(float width = 800.0f) {
        use(); // CreateContext leaves a context that was current so
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(width, 600.0f);
        unsigned char* pixels = nullptr;
        int w = 0;
        int h = 0;
        io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
    }
    ~Contexts() {
        use();
        ImPlot::DestroyContext(implot);
        ImGui::DestroyContext(imgui);
    }
    void use() const {
        ImGui::SetCurrentContext(imgui);
        ImPlot::SetCurrentContext(implot);
    }
};

// One frame with one plot "chart" `width` pixels wide; `inside` runs between its setup and
// its end. Returns the plot's state after the frame.
template <class F>
ui::ChartState frameWithPlot(float width, F inside) {
    ImGui::NewFrame();
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(width + 40.0f, 400.0f));
    ImGui::Begin("charts");
    ui::ChartState after;
    if (ui::plot::beginPlot("chart", ImVec2(width, 300.0f))) {
        inside();
        after = ChartBook::current().chartBeingDrawn();
        ImPlot::EndPlot();
    }
    ImGui::End();
    ImGui::EndFrame();
    return after;
}

const std::vector<std::string> kLongLabels{"a run with a rather long name, number one",
                                           "a run with a rather long name, number two"};

} // namespace

TEST(ChartBook, ANoteGivenInOneFrameIsAboveTheDataFromTheNext) {
    Contexts contexts;
    const ui::ChartState first = frameWithPlot(600.0f, [] { ui::plot::cornerNote("warmup"); });
    EXPECT_TRUE(first.shownNotes.empty());
    EXPECT_GT(first.notesBelow, 0.0f) << "drawn in the corner for its first frame";
    const ui::ChartState second = frameWithPlot(600.0f, [] { ui::plot::cornerNote("warmup"); });
    EXPECT_EQ(second.shownNotes, std::vector<std::string>{"warmup"});
    EXPECT_EQ(second.notesBelow, 0.0f) << "laid out above the data, not over it";
    const ui::ChartState third = frameWithPlot(600.0f, [] {});
    EXPECT_EQ(third.shownNotes, std::vector<std::string>{"warmup"}) << "last frame's notes";
    const ui::ChartState fourth = frameWithPlot(600.0f, [] {});
    EXPECT_TRUE(fourth.shownNotes.empty()) << "a note no longer given goes";
}

TEST(ChartBook, ALegendHiddenForWidthComesBackAndOneTheUserHidStaysHidden) {
    Contexts contexts(1200.0f);
    bool shown = true;
    bool flagged = false; // the plot's NoLegend flag after the legend's setup
    const auto legend = [&] {
        shown = ui::plot::setupLegendOf(kLongLabels);
        flagged = ImHasFlag(ImPlot::GetCurrentPlot()->Flags, ImPlotFlags_NoLegend);
    };
    EXPECT_TRUE(frameWithPlot(150.0f, legend).legendHiddenForWidth);
    EXPECT_FALSE(shown) << "a legend wider than 45% of the plot is hidden";
    EXPECT_TRUE(flagged);
    EXPECT_FALSE(frameWithPlot(1000.0f, legend).legendHiddenForWidth);
    EXPECT_TRUE(shown);
    EXPECT_FALSE(flagged) << "shown again once it fits";
    // The user hides it from the plot's menu (ImPlot keeps the flag): it stays hidden.
    frameWithPlot(1000.0f, [] { ImPlot::GetCurrentPlot()->Flags |= ImPlotFlags_NoLegend; });
    frameWithPlot(1000.0f, legend);
    EXPECT_TRUE(shown) << "no note says it was hidden for width";
    EXPECT_TRUE(flagged) << "the user's choice stays";
}

TEST(ChartBook, EachContextHasItsOwn) {
    Contexts window;
    frameWithPlot(600.0f, [] { ui::plot::cornerNote("window's note"); });
    ChartBook& windowBook = ChartBook::current();
    {
        Contexts exporter; // a chart export's contexts, current now: two frames, as an export
        EXPECT_NE(&ChartBook::current(), &windowBook);
        frameWithPlot(600.0f, [] { ui::plot::cornerNote("export's note"); });
        const ui::ChartState same =
            frameWithPlot(600.0f, [] { ui::plot::cornerNote("export's note"); });
        EXPECT_EQ(same.shownNotes, std::vector<std::string>{"export's note"})
            << "a plot of the same id in another context has its own notes";
    }
    window.use();
    EXPECT_EQ(&ChartBook::current(), &windowBook);
    EXPECT_EQ(frameWithPlot(600.0f, [] {}).shownNotes, std::vector<std::string>{"window's note"})
        << "the export's frames and notes are not the window's";
}
