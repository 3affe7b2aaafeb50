// gpuplan CLI entry point: parses flags (CLI11), runs one command, prints its output only when
// it succeeds, and maps outcomes to exit codes: 0 answer, 1 nothing fits, 2 bad input,
// 70 internal error.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>
#include <cstdio>
#include <exception>
#include <iostream>

#include "commands.h"
#include "gpuplan/input.h"
#include "gpuplan/safe_write.h"
#include "report.h"

namespace {

// "did you mean" for a mistyped subcommand or flag: walks argv along the subcommand chain and
// returns a hint for the first token CLI11 cannot place, or "" when none is close.
std::string DidYouMean(const CLI::App& app, int argc, char** argv) {
  const CLI::App* cur = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string t = argv[i];
    if (t.rfind("--", 0) == 0 && t.size() > 2) {
      const std::string name =
          t.substr(2, t.find('=') == std::string::npos ? std::string::npos : t.find('=') - 2);
      std::vector<std::string> names;
      for (const CLI::App* a = cur; a != nullptr; a = a->get_parent()) {
        for (const CLI::Option* o : a->get_options()) {
          for (const auto& l : o->get_lnames()) names.push_back(l);
        }
      }
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      const std::string best = gpuplan::ClosestMatch(name, names);
      if (!best.empty()) return "unknown flag \"" + t + "\": did you mean \"--" + best + "\"?";
      continue;
    }
    if (t.empty() || t[0] == '-') continue;
    if (i > 1) {  // the value of the previous flag
      const std::string prev = argv[i - 1];
      if (prev.rfind("-", 0) == 0 && prev.find('=') == std::string::npos) {
        const CLI::Option* o = nullptr;
        for (const CLI::App* a = cur; a != nullptr && o == nullptr; a = a->get_parent()) {
          o = a->get_option_no_throw(prev);
        }
        if (o != nullptr && o->get_expected_max() > 0) continue;
      }
    }
    std::vector<std::string> subs;
    const CLI::App* next = nullptr;
    for (const CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; })) {
      subs.push_back(s->get_name());
      if (s->get_name() == t) next = s;
    }
    if (next != nullptr) {
      cur = next;
      continue;
    }
    if (subs.empty()) continue;
    const std::string best = gpuplan::ClosestMatch(t, subs);
    if (!best.empty()) return "unknown command \"" + t + "\": did you mean \"" + best + "\"?";
  }
  return "";
}

// A flag value CLI11 could not convert ("Could not convert: --context = 1e9"): names the flag,
// the value and what it takes (a whole number or a number, in digits), with its default as an
// example when it has one.
std::string ConversionMessage(const CLI::App& app, const std::string& what) {
  const std::string head = "Could not convert: ";
  const size_t eq = what.find(" = ");
  if (what.rfind(head, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(head.size(), eq - head.size());
  const std::string value = what.substr(eq + 3);
  // The flag of the deepest subcommand being parsed (another command may spell it alike).
  const CLI::Option* o = app.get_option_no_throw(name);
  for (const CLI::App* cur = &app; cur != nullptr;) {
    const CLI::App* next = nullptr;
    for (const CLI::App* s : cur->get_subcommands([](const CLI::App*) { return true; })) {
      if (s->parsed()) next = s;
    }
    if (next != nullptr && next->get_option_no_throw(name) != nullptr) {
      o = next->get_option_no_throw(name);
    }
    cur = next;
  }
  const std::string type = o != nullptr ? o->get_type_name() : "";
  std::string takes = "a value of another form";
  if (type == "INT" || type == "UINT") takes = "a whole number (digits only, within range)";
  if (type == "FLOAT") takes = "a number";
  std::string msg = name + ": expected " + takes + ", got \"" + value + "\"";
  const std::string def = o != nullptr ? o->get_default_str() : "";
  if (!def.empty()) msg += " (e.g. " + name + " " + def + ", its default)";
  return msg;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuplan::cli;  // NOLINT(google-build-using-namespace): entry point only
  try {
    CLI::App app{
        "gpuplan: plan GPU servers for AI training and inference from first principles and real\n"
        "catalogs (memory, time, cost, pitfalls)."};
    app.set_version_flag("--version", std::string("gpuplan 0.1.0"));
    // Subcommands created below inherit this: global options (--json, --catalog, ...) are
    // accepted after the subcommand too.
    app.fallthrough();
    GlobalOptions g;
    app.add_option("--catalog", g.catalog_files,
                   "Override a catalog table: a gpus/cpus/instances/currency CSV, or a SkyPilot "
                   "vms.csv as [CLOUD=]PATH (repeatable)");
    app.add_flag("--json", g.json, "Machine-readable JSON output");
    app.add_option("--currency", g.currency, "Display currency: USD or CNY")->capture_default_str();
    app.add_option("--usd-per-cny,--cny-per-usd", g.cny_per_usd,
                   "Exchange rate as CNY per USD (default: data/currency.csv)");
    Runner run;
    RegisterCatalogCommands(app, g, run);
    RegisterMemoryCommand(app, g, run);
    RegisterValidateCommand(app, g, run);
    RegisterPlanCommand(app, g, run);
    RegisterInferCommands(app, g, run);
    RegisterCheckCommand(app, g, run);
    RegisterEmitCommand(app, g, run);
    RegisterSimulateCommand(app, g, run);
    RegisterServeApiCommand(app, g, run);
    app.require_subcommand(0, 1);
    try {
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ConversionError& e) {
      std::cerr << "error: " << ConversionMessage(app, e.what())
                << " (run `gpuplan --help` for usage)\n";
      return kExitBadInput;
    } catch (const CLI::ParseError& e) {
      const std::string hint = DidYouMean(app, argc, argv);
      std::cerr << "error: " << (hint.empty() ? std::string(e.what()) : hint)
                << " (run `gpuplan --help` for usage)\n";
      return kExitBadInput;
    }
    if (g.cny_per_usd && !(*g.cny_per_usd > 0)) {
      std::cerr << "error: --usd-per-cny: must be > 0, got " << *g.cny_per_usd
                << " (give CNY per USD, e.g. 7.2)\n";
      return kExitBadInput;
    }
    gpuplan::Result<Output> result = run ? run() : RunDefaultScenario(g);
    if (!result) {
      const auto& e = result.error();
      if (g.json) {
        nlohmann::json j = {{"error",
                             {{"code", gpuplan::ErrorCodeName(e.code)},
                              {"field", e.field},
                              {"message", e.message},
                              {"hint", e.hint}}}};
        std::cerr << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        std::cerr << "error: " << e.ToString() << "\n";
      }
      return e.code == gpuplan::ErrorCode::kInternal ? kExitInternal : kExitBadInput;
    }
    // A failed write (a full disk, /dev/full, a closed stdout) is an error, never exit 0.
    if (gpuplan::Status w = gpuplan::WriteAllToStream(stdout, result->text, "stdout"); !w) {
      std::cerr << "error: " << w.error().ToString() << "\n";
      return kExitBadInput;
    }
    return result->exit_code;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return kExitInternal;
  } catch (...) {
    std::cerr << "internal error\n";
    return kExitInternal;
  }
}
