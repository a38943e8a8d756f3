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
