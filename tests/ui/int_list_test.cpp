// The Sweep builder's editable lists of whole numbers (int_list.h): what they accept, and
// the reason they give for what they do not.

#include "int_list.h"

#include <gtest/gtest.h>
#include <string>

using namespace lmprof::ui;

TEST(IntList, ParsesEditableListsAndNamesWhatItRefuses) {
    std::string error;
    EXPECT_EQ(parseIntList(" 0, 1,2 ,5 ", 0, &error), (std::vector<int64_t>{0, 1, 2, 5}));
    EXPECT_EQ(parseIntList("128,", 1, &error), (std::vector<int64_t>{128}));
    EXPECT_FALSE(parseIntList("1, x", 0, &error));
    EXPECT_EQ(error, "'x' is not a whole number");
    EXPECT_FALSE(parseIntList("16, 0", 1, &error));
    EXPECT_EQ(error, "0 is below 1");
    EXPECT_FALSE(parseIntList(" , ", 0, &error));
    EXPECT_EQ(error, "the list is empty");
}
