// User catalog files (--catalog CLOUD=FILE): read with the input caps, identifiers checked
// for deployment files, merged into the known specs, dated from the file.
#include "gpuplan/catalog.h"
#include "gpuplan/input.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/embedded.h"
#include "io/csv.h"

namespace gpuplan {

using internal::CsvTable;
using internal::ParseCsv;
using internal::RowReader;
using internal::ToLower;

namespace {

Result<std::string> ReadWholeFile(const std::string& path, std::string_view field) {
  return ReadInputFile(path, field, kMaxCsvFileBytes);
}

// Every identifier of a user table reaches deployment files (emit): strict character sets.
// SkyPilot imports skip rows with unsafe names (OCI's "VM.Standard.E4.Flex$_2_8" CPU shapes)
// instead of failing the whole file; `skipped` counts them.
Status CheckIds(Catalog& c, std::string_view label, bool skip_unsafe_rows = false,
                int* skipped = nullptr) {
  const std::string L(label);
  for (const auto& a : c.accelerators) {
    if (auto st = CheckName(a.id, L + ": id"); !st) return st;
  }
  for (const auto& cpu : c.cpus) {
    if (auto st = CheckName(cpu.id, L + ": id"); !st) return st;
  }
  auto row_ok = [](const InstanceType& i) {
    return IsSafeIdentifier(i.cloud) && IsSafeName(i.instance_type) &&
           (i.region.empty() || IsSafeName(i.region)) &&
           (i.accelerator.empty() || IsSafeName(i.accelerator)) &&
           (i.cpu.empty() || IsSafeName(i.cpu));
  };
  if (skip_unsafe_rows) {
    const size_t before = c.instances.size();
    std::erase_if(c.instances, [&](const InstanceType& i) { return !row_ok(i); });
    if (skipped != nullptr) *skipped = static_cast<int>(before - c.instances.size());
    return {};
  }
  for (const auto& i : c.instances) {
    if (row_ok(i)) continue;
    if (auto st = CheckName(i.instance_type, L + ": instance_type"); !st) return st;
    const std::string where = L + ": " + i.instance_type;
    if (auto st = CheckIdentifier(i.cloud, where + ": cloud"); !st) return st;
    if (!i.region.empty()) {
      if (auto st = CheckName(i.region, where + ": region"); !st) return st;
    }
    if (!i.accelerator.empty()) {
      if (auto st = CheckName(i.accelerator, where + ": accelerator"); !st) return st;
    }
    if (!i.cpu.empty()) {
      if (auto st = CheckName(i.cpu, where + ": cpu"); !st) return st;
    }
  }
  return {};
}

// Instances whose accelerator the catalog no longer has (a gpus override that drops one).
Status CheckInstanceAccelerators(const Catalog& c, std::string_view label) {
  for (const auto& i : c.instances) {
    if (!i.accelerator.empty() && c.FindAccelerator(i.accelerator) == nullptr) {
      return MakeError(ErrorCode::kInvalidArgument, std::string(label),
                       "instance " + Excerpt(i.cloud + " " + i.instance_type) +
                           " uses accelerator " + Excerpt(i.accelerator) +
                           ", which the catalog does not define",
                       "keep that accelerator's row in the gpus table, or override the "
                       "instances too");
    }
  }
  return {};
}

}  // namespace

std::string FileDate(const std::string& path) {
  std::error_code ec;
  auto t = std::filesystem::last_write_time(path, ec);
  if (ec) return "";
  auto sys = std::chrono::file_clock::to_sys(t);
  std::time_t tt = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(sys));
  std::tm tm{};
  if (!gmtime_r(&tt, &tm)) return "";
  char buf[16];
  if (std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm) != 10) return "";
  return buf;
}

Status ApplyCatalogOverride(Catalog& catalog, std::string_view spec) {
  std::string s(spec);
  std::string cloud;
  size_t eq = s.find('=');
  if (eq != std::string::npos && s.find('/') > eq) {
    cloud = ToLower(s.substr(0, eq));
    s = s.substr(eq + 1);
  }
  auto text = ReadWholeFile(s, "--catalog");
  if (!text) return text.error();
  auto kind = DetectTableKind(s, *text);
  if (!kind) return kind.error();
  Catalog fresh;
  // Keep what other tables need to resolve names.
  fresh.accelerators = catalog.accelerators;
  fresh.cpus = catalog.cpus;
  switch (*kind) {
    case TableKind::kGpus: {
      fresh.accelerators.clear();
      if (auto st = LoadTable(fresh, *kind, s, *text); !st) return st;
      if (auto st = CheckIds(fresh, s); !st) return st;
      catalog.accelerators = std::move(fresh.accelerators);
      // Instances of accelerators the new table drops go too: nothing may point at a missing
      // accelerator (`check` on such an instance was an internal error).
      std::erase_if(catalog.instances, [&](const InstanceType& i) {
        return !i.accelerator.empty() && catalog.FindAccelerator(i.accelerator) == nullptr;
      });
      return {};
    }
    case TableKind::kCpus:
      fresh.cpus.clear();
      if (auto st = LoadTable(fresh, *kind, s, *text); !st) return st;
      if (auto st = CheckIds(fresh, s); !st) return st;
      catalog.cpus = std::move(fresh.cpus);
      return {};
    case TableKind::kCurrency:
      if (auto st = LoadTable(fresh, *kind, s, *text); !st) return st;
      catalog.rates = std::move(fresh.rates);
      return {};
    case TableKind::kInstances:
    case TableKind::kSkyPilotVms: {
      if (*kind == TableKind::kSkyPilotVms && cloud.empty()) {
        cloud = std::filesystem::path(s).parent_path().filename().string();
        if (cloud.empty()) {
          return MakeError(ErrorCode::kInvalidArgument, "--catalog",
                           "cannot tell the cloud of SkyPilot file " + Excerpt(s),
                           "write --catalog CLOUD=PATH, e.g. --catalog aws=vms.csv");
        }
      }
      if (*kind == TableKind::kSkyPilotVms) {
        // Merged into the known specs, dated by the file.
        SkyPilotImportStats stats;
        if (auto st = ImportSkyPilotVms(fresh, cloud, s, *text, &stats, FileDate(s)); !st) {
          return st;
        }
        MergeImportedInstances(catalog, cloud, std::move(fresh.instances));
        const std::string id = ToLower(cloud);
        std::erase_if(catalog.import_skips, [&](const ImportSkip& k) { return k.cloud == id; });
        catalog.import_skips.push_back({id, "unknown accelerator or fractional GPU (import)",
                                        stats.skipped_unknown_accelerator});
        catalog.import_skips.push_back({id, "TPU (not modelled, import)", stats.tpu_rows_skipped});
        return {};
      }
      if (auto st = LoadTable(fresh, *kind, s, *text, cloud); !st) return st;
      fresh.accelerators.clear();
      fresh.cpus.clear();
      if (auto st = CheckIds(fresh, s, *kind == TableKind::kSkyPilotVms); !st) return st;
      fresh.accelerators = catalog.accelerators;
      if (auto st = CheckInstanceAccelerators(fresh, s); !st) return st;
      std::set<std::string> clouds;
      for (const auto& i : fresh.instances) clouds.insert(i.cloud);
      std::erase_if(catalog.instances,
                    [&](const InstanceType& i) { return clouds.count(i.cloud) > 0; });
      for (auto& i : fresh.instances) catalog.instances.push_back(std::move(i));
      return {};
    }
  }
  return {};
}

}  // namespace gpuplan
