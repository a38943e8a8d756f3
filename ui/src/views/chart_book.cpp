// Each ImGui context's chart book (chart_book.h), held by a shutdown hook of the context:
// the hook finds it, and frees it when the context is destroyed.

#include "chart_book.h"

#include <imgui_internal.h>
#include <implot.h>
#include <implot_internal.h>

namespace lmprof::ui {

namespace {

// The owner the book's hook is marked with among the context's hooks.
ImGuiID bookOwner() {
    return ImHashStr("lmprof chart book");
}

void freeBook(ImGuiContext*, ImGuiContextHook* hook) {
    delete static_cast<ChartBook*>(hook->UserData);
    hook->UserData = nullptr;
}

} // namespace

ChartBook& ChartBook::current() {
    ImGuiContext* context = ImGui::GetCurrentContext();
    IM_ASSERT(context && "a chart book needs an ImGui context");
    const ImGuiID owner = bookOwner();
    for (const ImGuiContextHook& hook : context->Hooks) {
        if (hook.Owner == owner && hook.Type == ImGuiContextHookType_Shutdown && hook.UserData) {
            return *static_cast<ChartBook*>(hook.UserData);
        }
    }
    ImGuiContextHook hook;
    hook.Type = ImGuiContextHookType_Shutdown;
    hook.Owner = owner;
    hook.Callback = freeBook;
    hook.UserData = new ChartBook();
    ImGui::AddContextHook(context, &hook);
    return *static_cast<ChartBook*>(hook.UserData);
}

ChartState& ChartBook::chartBeingDrawn() {
    ChartState& chart = m_charts[ImPlot::GetCurrentPlot()->ID];
    const int frame = ImGui::GetFrameCount();
    if (chart.frame != frame) {
        if (chart.frame >= 0) {
            chart.shownNotes = std::move(chart.pendingNotes);
        }
        chart.pendingNotes.clear();
        chart.notesBelow = 0.0f;
        chart.pointsPerPixel = 1.0f;
        chart.frame = frame;
    }
    return chart;
}

} // namespace lmprof::ui
