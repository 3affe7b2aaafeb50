// gpuplan validate FILE.jsonl... [--kind K] [--json]: predictions vs published measurements.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "commands.h"
#include "gpuplan/validate_document.h"
#include "gpuplan/input.h"
#include "gpuplan/validate.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

struct ValidateArgs {
  std::vector<std::string> files;
  std::string kind;
  bool quiet = false;     // summary only
  bool markdown = false;  // Markdown tables (docs/accuracy.md)
  std::string explain;    // case id to explain
  std::string cv;         // "source": leave-one-source-out cross-validation
};

std::string Md(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|')
      out += "\\|";
    else
      out += ch;
  }
  return out;
}

json SummaryJson(const KindSummary& s) {
  return {{"cases", s.cases},
          {"covered", s.covered},
          {"median_abs_err", s.median_abs_err},
          {"p90_abs_err", s.p90_abs_err},
          {"max_abs_err", s.max_abs_err},
          {"bias", s.bias}};
}

// --cv source: in-sample (shipped constants), refit in-sample and held-out figures per file and
// kind, and the fitted constants.
Result<Output> RunCrossValidate(const GlobalOptions& g, const ValidateArgs& a, const Catalog& cat) {
  if (a.cv != "source") {
    return MakeError(ErrorCode::kInvalidArgument, "--cv", "unknown split " + Excerpt(a.cv),
                     "use --cv source (leave one source out)");
  }
  std::vector<CaseFile> files;
  for (const auto& f : a.files) {
    auto text = ReadInputFile(f, "FILE", kMaxJsonlFileBytes);
    if (!text) return text.error();
    files.push_back({f, *text});
  }
  auto cv = CrossValidateBySource(files, cat, a.kind);
  if (!cv) return cv.error();
  // Per (file, kind) and per file "all": indices into the reports' case lists.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < cv->shipped.cases.size(); ++i) {
    const auto& c = cv->shipped.cases[i];
    groups[{c.file, c.kind}].push_back(i);
    groups[{c.file, "~all"}].push_back(i);
  }
  auto summary = [&](const ValidationReport& r, const std::vector<size_t>& idx) {
    std::vector<const CaseResult*> v;
    for (size_t i : idx) v.push_back(&r.cases[i]);
    return Summarize(v);
  };
  auto pct = [](double x) { return fmt::format("{:.1f}%", 100 * x); };
  Output out;
  if (g.json) {
    json j = {{"schema_version", kSchemaVersion},
              {"split", "source"},
              {"groups", json::array()},
              {"constants", json::array()},
              {"sources", cv->sources}};
    for (const auto& [k, idx] : groups) {
      j["groups"].push_back({{"file", k.first},
                             {"kind", k.second == "~all" ? "all" : k.second},
                             {"in_sample", SummaryJson(summary(cv->shipped, idx))},
                             {"refit_in_sample", SummaryJson(summary(cv->refit, idx))},
                             {"held_out", SummaryJson(summary(cv->held_out, idx))}});
    }
    for (const auto& c : cv->constants) {
      j["constants"].push_back(
          {{"key", c.key}, {"shipped", c.shipped}, {"refit_all", c.refit_all}});
    }
    j["cases"] = json::array();
    for (size_t i = 0; i < cv->shipped.cases.size(); ++i) {
      const CaseResult& in = cv->shipped.cases[i];
      const CaseResult& held = cv->held_out.cases[i];
      json e = {{"id", in.id},         {"file", in.file},     {"kind", in.kind},
                {"metric", in.metric}, {"source", in.source}, {"measured", in.measured}};
      e["in_sample_error"] = in.ok && in.error ? json(*in.error) : json(nullptr);
      e["held_out_error"] = held.ok && held.error ? json(*held.error) : json(nullptr);
      if (!in.ok) e["reason"] = in.reason;
      j["cases"].push_back(e);
    }
    out.text = DumpJson(j) + "\n";
    return out;
  }
  const std::vector<std::string> head = {
      "file",         "kind",      "covered",         "in-sample median", "in-sample p90",
      "refit median", "refit p90", "held-out median", "held-out p90"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, idx] : groups) {
    const KindSummary s = summary(cv->shipped, idx), r = summary(cv->refit, idx),
                      h = summary(cv->held_out, idx);
    std::string file = k.first;
    if (auto sl = file.rfind('/'); sl != std::string::npos) file = file.substr(sl + 1);
    rows.push_back({file, k.second == "~all" ? "all" : k.second,
                    fmt::format("{}/{}", s.covered, s.cases), pct(s.median_abs_err),
                    pct(s.p90_abs_err), pct(r.median_abs_err), pct(r.p90_abs_err),
                    pct(h.median_abs_err), pct(h.p90_abs_err)});
  }
  if (a.markdown) {
    std::string md = "| " + fmt::format("{}", fmt::join(head, " | ")) + " |\n|";
    for (size_t i = 0; i < head.size(); ++i) md += "---|";
    md += "\n";
    for (const auto& r : rows) md += "| " + fmt::format("{}", fmt::join(r, " | ")) + " |\n";
    md += fmt::format(
        "\n{} sources (folds): {}\n\n| constant | shipped | fitted on all cases |\n|---|---|---|\n",
        cv->sources.size(), fmt::join(cv->sources, ", "));
    for (const auto& c : cv->constants) {
      md += fmt::format("| {} | {:.4g} | {:.4g} |\n", c.key, c.shipped, c.refit_all);
    }
    out.text = md;
    return out;
  }
  Table t(head);
  for (const auto& r : rows) t.Row(r);
  out.text = fmt::format(
      "gpuplan validate --cv source: {} case(s), {} source(s); constants refitted without each "
      "source, error measured on it\n\n",
      cv->shipped.cases.size(), cv->sources.size());
  out.text += t.Render();
  Table c({"constant", "shipped", "fitted on all cases"});
  for (const auto& x : cv->constants)
    c.Row({x.key, fmt::format("{:.4g}", x.shipped), fmt::format("{:.4g}", x.refit_all)});
  out.text += "\n" + c.Render();
  // Each case's error in sample and with its own source held out: where the two part, the
  // constants lean on that source.
  Table per({"case", "source", "metric", "in-sample", "held out"});
  auto err = [&](const CaseResult& r) {
    return r.ok && r.error ? fmt::format("{:+.1f}%", 100 * *r.error) : std::string("-");
  };
  for (size_t i = 0; i < cv->shipped.cases.size(); ++i) {
    const CaseResult& in = cv->shipped.cases[i];
    per.Row({in.id, in.source, in.metric, err(in), err(cv->held_out.cases[i])});
  }
  out.text += "\n" + per.Render();
  return out;
}

Result<Output> RunValidate(const GlobalOptions& g, const ValidateArgs& a) {
  static const char* kKinds[] = {"train_throughput", "train_time", "infer_throughput",
                                 "infer_latency", "memory"};
  if (!a.kind.empty() &&
      std::find(std::begin(kKinds), std::end(kKinds), a.kind) == std::end(kKinds)) {
    return MakeError(ErrorCode::kInvalidArgument, "--kind", "unknown kind " + Excerpt(a.kind),
                     "use train_throughput, train_time, infer_throughput, infer_latency or memory");
  }
  auto cat = LoadCatalog(g);
  if (!cat) return cat.error();
  if (!a.cv.empty() && !a.explain.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "--explain",
                     "explains one prediction of the shipped constants; --cv refits them",
                     "run --explain without --cv");
  }
  if (!a.cv.empty()) return RunCrossValidate(g, a, *cat);
  ValidationReport all;
  for (const auto& f : a.files) {
    auto text = ReadInputFile(f, "FILE", kMaxJsonlFileBytes);
    if (!text) return text.error();
    auto r = RunValidation(*text, f, *cat, a.kind, a.explain);
    if (!r) return r.error();
    for (auto& c : r->cases) all.cases.push_back(std::move(c));
  }
  if (all.cases.empty()) {  // every file holds cases (RunValidation), none of this kind
    return MakeError(ErrorCode::kNotFound, "--kind",
                     "no case of kind " + Excerpt(a.kind) + " in the file(s)",
                     "drop --kind, or give a file with cases of that kind");
  }
  SummarizeReport(all);
  if (!a.explain.empty() && std::none_of(all.cases.begin(), all.cases.end(),
                                         [&](const CaseResult& r) { return r.id == a.explain; })) {
    std::vector<std::string> ids;
    for (const auto& r : all.cases) ids.push_back(r.id);
    const std::string best = ClosestMatch(a.explain, ids);
    return MakeError(ErrorCode::kNotFound, "--explain",
                     "no case " + Excerpt(a.explain) + " in the file(s)" +
                         (a.kind.empty() ? "" : " of kind " + a.kind),
                     best.empty() ? "give a case id from the table `validate FILE` prints"
                                  : "did you mean \"" + best + "\"?");
  }

  Output out;
  if (g.json) {
    json j = ValidationDocument(all);
    out.text = DumpJson(j) + "\n";
    return out;
  }
  auto pct = [](double x) { return fmt::format("{:.1f}%", 100 * x); };
  if (a.markdown) {
    std::string md =
        "| kind | cases | covered | coverage | median \\|err\\| | p90 \\|err\\| | max \\|err\\| | "
        "bias |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& [k, v] : all.summary) {
      md +=
          fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:+.1f}% |\n", k, v.cases, v.covered,
                      pct(v.cases ? static_cast<double>(v.covered) / v.cases : 0),
                      pct(v.median_abs_err), pct(v.p90_abs_err), pct(v.max_abs_err), 100 * v.bias);
    }
    if (a.quiet) {  // --summary: the summary table only
      out.text = md;
      return out;
    }
    md += "\n| case | metric | measured | predicted | error / reason |\n|---|---|---|---|---|\n";
    for (const auto& r : all.cases) {
      md += fmt::format(
          "| {} | {} | {:.4g} | {} | {} |\n", Md(r.id), r.metric, r.measured,
          r.predicted ? fmt::format("{:.4g}", *r.predicted) : "-",
          r.ok ? fmt::format("{:+.1f}%", 100 * *r.error) : "unsupported: " + Md(r.reason));
    }
    out.text = md;
    return out;
  }
  Table s(
      {"kind", "cases", "covered", "coverage", "median |err|", "p90 |err|", "max |err|", "bias"});
  for (const auto& [k, v] : all.summary) {
    if (k == "all") continue;
    s.Row({k, std::to_string(v.cases), std::to_string(v.covered),
           pct(v.cases ? static_cast<double>(v.covered) / v.cases : 0), pct(v.median_abs_err),
           pct(v.p90_abs_err), pct(v.max_abs_err), fmt::format("{:+.1f}%", 100 * v.bias)});
  }
  const KindSummary& t = all.summary["all"];
  s.Row({"all", std::to_string(t.cases), std::to_string(t.covered),
         pct(t.cases ? static_cast<double>(t.covered) / t.cases : 0), pct(t.median_abs_err),
         pct(t.p90_abs_err), pct(t.max_abs_err), fmt::format("{:+.1f}%", 100 * t.bias)});
  out.text = fmt::format(
      "gpuplan validate: {} case(s) from {} file(s); error = predicted / measured - 1\n\n",
      all.cases.size(), a.files.size());
  out.text += s.Render();
  for (const auto& r : all.cases) {
    if (r.id != a.explain) continue;
    out.text += "\nexplain " + r.id + ":\n";
    if (r.explain.empty()) out.text += "  (no trace for this kind of prediction)\n";
    for (const auto& [name, v] : r.explain) out.text += fmt::format("  {:<70} {:.6g}\n", name, v);
  }
  if (!a.quiet) {
    Table c({"case", "metric", "measured", "predicted", "error / reason"});
    for (const auto& r : all.cases) {
      c.Row({r.id, r.metric, fmt::format("{:.4g}", r.measured),
             r.predicted ? fmt::format("{:.4g}", *r.predicted) : "-",
             r.ok ? fmt::format("{:+.1f}%", 100 * *r.error) : "unsupported: " + r.reason});
    }
    out.text += "\n" + c.Render();
  }
  return out;
}

}  // namespace

void RegisterValidateCommand(CLI::App& app, GlobalOptions& g, Runner& run) {
  auto a = std::make_shared<ValidateArgs>();
  auto* c = app.add_subcommand("validate", "Compare predictions with published measurements");
  c->add_option("files", a->files, "Case files (JSON lines, ../shared/validation/SCHEMA.md)")
      ->required();
  c->add_option("--kind", a->kind, "Only cases of this kind");
  c->add_flag("--summary", a->quiet, "Print the summary table only");
  c->add_option("--explain", a->explain, "Print the prediction's terms for this case id");
  c->add_option("--cv", a->cv,
                "Cross-validate: 'source' refits the performance constants without each source's "
                "cases and measures the error on them");
  c->add_flag("--markdown", a->markdown, "Markdown tables (used to regenerate docs/accuracy.md)");
  c->callback([&g, &run, a] { run = [&g, a] { return RunValidate(g, *a); }; });
}

}  // namespace gpuplan::cli
