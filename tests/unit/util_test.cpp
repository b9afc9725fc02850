// The util layer: name tables, text reading and the one parallel loop.
#include <gtest/gtest.h>

#include "sanitizer.hpp"
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <array>
#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgeplan/util/names.hpp"
#include "edgeplan/util/parallel.hpp"
#include "edgeplan/util/text.hpp"
#include "edgeplan/util/units.hpp"

namespace edgeplan::util {
namespace {

struct Named {
  const char* name;
  int value;
};
constexpr std::array kTable{Named{"Q4_K_M", 1}, Named{"Q8_0", 2}, Named{"F16", 3}};
const auto kNameOf = [](const Named& n) { return n.name; };

TEST(UtilNames, FindsIgnoringCase) {
  ASSERT_NE(find_named(kTable, "q8_0", kNameOf), nullptr);
  EXPECT_EQ(find_named(kTable, "q8_0", kNameOf)->value, 2);
  EXPECT_EQ(find_named(kTable, "Q8", kNameOf), nullptr);
  EXPECT_TRUE(iequal("f16", "F16"));
  EXPECT_FALSE(iequal("f16", "F1"));
  EXPECT_EQ(names_of(kTable, kNameOf), (std::vector<std::string>{"Q4_K_M", "Q8_0", "F16"}));
}

TEST(UtilNames, LookupOrSuggestNamesTheNearest) {
  const auto found = lookup_or_suggest(kTable, "f16", kNameOf, "format");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ((*found)->value, 3);
  const auto missing = lookup_or_suggest(kTable, "Q8_1", kNameOf, "format");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "unknown format 'Q8_1'; did you mean Q8_0?");
  EXPECT_EQ(lookup_or_suggest(kTable, "zzzzzzzz", kNameOf, "format").error().message, "unknown format 'zzzzzzzz'");
}

TEST(UtilText, SplitListTrimsAndRefusesEmptyItems) {
  EXPECT_EQ(*split_list("a, b ,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(*split_list("one"), (std::vector<std::string>{"one"}));
  EXPECT_EQ(split_list(""), std::nullopt);
  EXPECT_EQ(split_list("a,,b"), std::nullopt);
  EXPECT_EQ(split_list("a, "), std::nullopt);
}

TEST(UtilText, ParseNumberTakesWholeFiniteDecimals) {
  EXPECT_EQ(parse_number("68.25"), 68.25);
  EXPECT_EQ(parse_number("-1e3"), -1000.0);
  EXPECT_EQ(parse_number("12abc"), std::nullopt);
  EXPECT_EQ(parse_number(" 1"), std::nullopt);
  EXPECT_EQ(parse_number("nan"), std::nullopt);
  EXPECT_EQ(parse_number("inf"), std::nullopt);
  EXPECT_EQ(parse_number("1e999"), std::nullopt);
  EXPECT_EQ(parse_number(""), std::nullopt);
}

TEST(UtilText, ParseTokensTakesKAndM) {
  EXPECT_EQ(parse_tokens("8192"), 8192u);
  EXPECT_EQ(parse_tokens("8k"), 8192u);
  EXPECT_EQ(parse_tokens("32K"), 32768u);
  EXPECT_EQ(parse_tokens("1M"), 1048576u);
  EXPECT_EQ(parse_tokens("k"), std::nullopt);
  EXPECT_EQ(parse_tokens("1.5k"), std::nullopt);
  EXPECT_EQ(parse_tokens("-8k"), std::nullopt);
  EXPECT_EQ(parse_tokens("8G"), std::nullopt);
  EXPECT_EQ(parse_tokens("18446744073709551615M"), std::nullopt);
}

TEST(UtilText, ParseBytesTakesDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_bytes("4096"), 4096u);
  EXPECT_EQ(parse_bytes("512MiB"), 536870912u);
  EXPECT_EQ(parse_bytes("6GiB"), 6442450944u);
  EXPECT_EQ(parse_bytes("2GB"), 2000000000u);
  EXPECT_EQ(parse_bytes("1.5GiB"), 1610612736u);
  EXPECT_EQ(parse_bytes("64kB"), 64000u);
  EXPECT_EQ(parse_bytes("1KiB"), 1024u);
  EXPECT_EQ(parse_bytes("1TB"), 1000000000000u);
  EXPECT_EQ(parse_bytes("100B"), 100u);
  EXPECT_EQ(parse_bytes("6 GiB"), std::nullopt);
  EXPECT_EQ(parse_bytes("6Gib"), std::nullopt);
  EXPECT_EQ(parse_bytes("-1GiB"), std::nullopt);
  EXPECT_EQ(parse_bytes("GiB"), std::nullopt);
  EXPECT_EQ(parse_bytes("1e30GB"), std::nullopt);
}

TEST(UtilParallel, CoversEveryItemOnceInContiguousParts) {
  std::vector<int> seen(100003, 0);
  parallel_for(seen.size(), [&](unsigned, std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) ++seen[i];
  }, 1, 7);
  for (int s : seen) ASSERT_EQ(s, 1);
}

TEST(UtilParallel, TheWorkerCountIsWhatWasAskedAtMost) {
  std::atomic<unsigned> parts{0};
  parallel_for(10, [&](unsigned worker, std::uint64_t, std::uint64_t) {
    EXPECT_LT(worker, 3u);
    ++parts;
  }, 1, 3);
  EXPECT_EQ(parts.load(), 3u);
  parts = 0;
  parallel_for(2, [&](unsigned, std::uint64_t, std::uint64_t) { ++parts; }, 1, 8);  // no more parts than items
  EXPECT_EQ(parts.load(), 2u);
}

TEST(UtilParallel, AnExceptionOfAPartIsRethrownAfterAllFinish) {
  std::atomic<unsigned> finished{0};
  EXPECT_THROW(parallel_for(4, [&](unsigned worker, std::uint64_t, std::uint64_t) {
    ++finished;
    if (worker == 1) throw std::runtime_error("part 1");
  }, 1, 4), std::runtime_error);
  EXPECT_EQ(finished.load(), 4u);
}

// Threads the system cannot start (here: an address space too small for their stacks) leave their parts to the
// calling thread: every part still runs once. Before, the process died in std::terminate. In a child, as the limit
// is the process's; not under AddressSanitizer, whose shadow memory needs the address space.
TEST(UtilParallel, ThreadsThatCannotStartLeaveTheirPartsToTheCaller) {
#ifdef EDGEPLAN_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
#else
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    long pages = 0;
    std::FILE* statm = std::fopen("/proc/self/statm", "r");
    if (!statm || std::fscanf(statm, "%ld", &pages) != 1) ::_exit(2);
    std::fclose(statm);
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (24 << 20);
    const rlimit as{limit, limit};  // room for two or three 8 MiB thread stacks, not 63
    if (::setrlimit(RLIMIT_AS, &as) != 0) ::_exit(2);
    std::atomic<unsigned> parts{0};
    parallel_for(64, [&](unsigned, std::uint64_t, std::uint64_t) { ++parts; }, 1, 64);
    ::_exit(parts.load() == 64 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
#endif
}

// FNV-1a 64 (http://www.isthe.com/chongo/tech/comp/fnv/): its published values of "" and "a".
TEST(UtilNames, NameHashIsFnv1a) {
  static_assert(util::name_hash("") == 0xcbf29ce484222325ull);
  EXPECT_EQ(util::name_hash("a"), 0xaf63dc4c8601ec8cull);
}

TEST(UtilUnits, PrefixesAreExact) {
  EXPECT_EQ(units::kGiga, 1e9);
  EXPECT_EQ(units::kTera, 1e12);
  EXPECT_EQ(units::kGiB, 1073741824.0);
}

}  // namespace
}  // namespace edgeplan::util
