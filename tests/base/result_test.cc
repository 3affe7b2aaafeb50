// MakeError: an error without a hint whose message is a range ("must be in [1, 366], got 0")
// carries that range as its fix; any other message, or a given hint, is left as written.
#include <gtest/gtest.h>

#include "gpuplan/result.h"

namespace gpuplan {
namespace {

std::string HintOf(const std::string& message, const std::string& hint = "") {
  return MakeError(ErrorCode::kInvalidArgument, "--x", message, hint).hint;
}

TEST(MakeError, ARangeMessageStatesItsFix) {
  EXPECT_EQ(HintOf("must be in [1, 366], got 0"), "use a value in [1, 366]");
  EXPECT_EQ(HintOf("must be in (0, 1], got 1.5"), "use a value in (0, 1]");
  EXPECT_EQ(HintOf("must be >= 1, got -2"), "use a value >= 1");
  EXPECT_EQ(HintOf("must be > 0, got 0"), "use a value > 0");
  EXPECT_EQ(HintOf("must be at most 64, got 65"), "use a value at most 64");
  EXPECT_EQ(HintOf("must be a whole number in [1, 8], got 9"), "use a whole number in [1, 8]");
}

TEST(MakeError, OtherMessagesAndGivenHintsAreKept) {
  EXPECT_EQ(HintOf("must be in [1, 366], got 0", "pick a day count"), "pick a day count");
  EXPECT_EQ(HintOf("unknown cloud \"awz\""), "");
  EXPECT_EQ(HintOf("must be fp32 or bf16, got \"x\""), "");
  EXPECT_EQ(HintOf("must be in [1, 366]"), "");  // no value: not a range check's message
}

}  // namespace
}  // namespace gpuplan
