// The window registry: every window of the app, in draw order. A window is its view file
// (the class, and an entry function naming its dock place and exportable charts) plus its
// line here.
//
// The draw order matters on a first launch: a dock place shows the first window drawn into
// it, and the last new window takes the focus, so the run views come before the sweep and
// summary windows that share their places as tabs.

#include "view.h"

namespace lmprof::ui {

WindowEntry configWindow();
WindowEntry filesWindow();
WindowEntry stepTimesWindow();
WindowEntry memoryWindow();
WindowEntry telemetryWindow();
WindowEntry histogramWindow();
WindowEntry throughputWindow();
WindowEntry sweepWindow();
WindowEntry summaryWindow();
WindowEntry heatmapWindow();
WindowEntry precisionWindow();
WindowEntry precisionLabWindow();
WindowEntry distributedWindow();
WindowEntry warmupWindow();
WindowEntry compareWindow();
WindowEntry opsWindow();
WindowEntry modulesWindow();
WindowEntry runsTableWindow();
WindowEntry studyWindow();

const std::vector<WindowEntry>& windowRegistry() {
    static const std::vector<WindowEntry> all = {
        configWindow(),      filesWindow(),     stepTimesWindow(),  memoryWindow(),
        telemetryWindow(),   histogramWindow(), throughputWindow(), sweepWindow(),
        summaryWindow(),     heatmapWindow(),   precisionWindow(),  precisionLabWindow(),
        distributedWindow(), warmupWindow(),    compareWindow(),    opsWindow(),
        modulesWindow(),     studyWindow(),     runsTableWindow()};
    return all;
}

} // namespace lmprof::ui
