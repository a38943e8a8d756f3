// lmprof-cli's flags for the plain configuration fields come from their declarations
// (ValueField, config.h): a throwaway field gets its flag with its help, sets the run's
// configuration, and its range errors name the flag (tests/engine/throwaway_field.h).

#include "cli_commands.h"
#include "cli_options.h"
#include "throwaway_field.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

using namespace lmprof;
using namespace lmprof::app;

TEST(CliFields, AThrowawayFieldGetsItsFlagHelpAndMessages) {
    const engine::ExtraValueField declared(engine::test::throwawayField());
    CLI::App app;
    CommonOptions o;
    addCommonOptions(app, o);
    const std::string help = app.help();
    EXPECT_NE(help.find("--throwaway-steps"), std::string::npos) << help;
    EXPECT_NE(help.find("a field declared by a test only"), std::string::npos) << help;

    app.parse("--throwaway-steps 2", false);
    const auto config = buildConfig("tiny", 32, "fp32", "train", o);
    ASSERT_TRUE(config);
    EXPECT_EQ(config->warmupSteps, 2);

    app.parse("--throwaway-steps 9", false);
    testing::internal::CaptureStderr();
    EXPECT_FALSE(buildConfig("tiny", 32, "fp32", "train", o));
    const std::string said = testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("--throwaway-steps (throwaway_steps): must be between 0 and 3, got 9"),
              std::string::npos)
        << said;
}

// In lmprof-cli sweep a field a sweep can list takes a comma-separated list, each entry
// checked as the one value elsewhere; elsewhere a list is refused naming the flag.
TEST(CliFields, AThrowawayFieldIsAListInSweep) {
    const engine::ExtraValueField declared(engine::test::throwawayField());
    CLI::App sweep;
    CommonOptions o;
    addCommonOptions(sweep, o, /*sweepLists=*/true);
    EXPECT_NE(sweep.help().find("a comma-separated list sweeps it"), std::string::npos);
    sweep.parse("--throwaway-steps 1,3", false);
    EXPECT_EQ(o.valueLists.at("throwaway_steps"), (std::vector<int64_t>{1, 3}));
    try {
        sweep.parse("--throwaway-steps 1,x", false);
        ADD_FAILURE() << "a list with a word in it was taken";
    } catch (const CLI::ParseError& e) {
        EXPECT_NE(std::string(e.what()).find("--throwaway-steps"), std::string::npos) << e.what();
    }

    CLI::App run;
    CommonOptions one;
    addCommonOptions(run, one);
    try {
        run.parse("--throwaway-steps 1,3", false);
        ADD_FAILURE() << "run took a list";
    } catch (const CLI::ParseError& e) {
        EXPECT_NE(std::string(e.what()).find("--throwaway-steps"), std::string::npos) << e.what();
    }
}
