// The shipped completion scripts are exactly what the parser generates: they cannot drift.

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "process.hpp"

using namespace cerulion::test;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("ShippedCompletionsMatchTheParser", "[completion]") {
  auto [shell, file] = GENERATE(std::make_pair(std::string("bash"), std::string("cerulion.bash")),
                                std::make_pair(std::string("zsh"), std::string("_cerulion")),
                                std::make_pair(std::string("fish"), std::string("cerulion.fish")));
  auto r = run_cerulion({"completion", shell});
  REQUIRE(r.exit_code == 0);
  INFO("regenerate with: cmake --build build --target completions");
  CHECK(r.out == slurp(std::string(CERULION_SOURCE_DIR) + "/completions/" + file));
}

TEST_CASE("BashCompletionScriptParses", "[completion]") {
  auto r = run_process({"bash", "-n", std::string(CERULION_SOURCE_DIR) + "/completions/cerulion.bash"});
  CHECK(r.exit_code == 0);
}

TEST_CASE("BashCompletionOffersModesAndSubcommands", "[completion]") {
  const std::string script = std::string(CERULION_SOURCE_DIR) + "/completions/cerulion.bash";
  auto r = run_process({"bash", "-c",
                        "source '" + script + "'; COMP_WORDS=(cerulion ping --mode ''); COMP_CWORD=3; _cerulion; "
                        "echo \"${COMPREPLY[*]}\"; COMP_WORDS=(cerulion topic ''); COMP_CWORD=2; _cerulion; "
                        "echo \"${COMPREPLY[*]}\""});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("lockstep free-run\n") != std::string::npos);
  CHECK(r.out.find("list info hz") != std::string::npos);
}
