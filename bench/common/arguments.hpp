// SPDX-License-Identifier: Apache-2.0
#pragma once
// Command-line helpers of the benches, plain C++ (tests/bench/support_test.cpp).

#include <string>
#include <vector>

namespace fusekit::bench {

/// `args` (args[0] the program) with `--<flag>=<value>` put first when no
/// argument sets that flag: a bench's default that the command line overrides
/// (Google Benchmark's per-benchmark MinTime would win over the flag).
inline std::vector<std::string> with_default_flag(std::vector<std::string> args, const std::string& flag,
                                                  const std::string& value) {
  std::string const set = "--" + flag;
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == set || args[i].rfind(set + "=", 0) == 0) { return args; }
  }
  args.insert(args.begin() + (args.empty() ? 0 : 1), set + "=" + value);
  return args;
}

}  // namespace fusekit::bench
