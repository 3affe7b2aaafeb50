// The input contract (docs/reliability.md): limits every reader enforces, helpers that keep user
// text out of messages and outputs in a safe form, identifier checks for values that reach
// deployment files, and the one validation of a training or serving job shared by the CLI flags
// and the YAML readers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.h"

namespace gpuplan {

// --- Limits. Inputs beyond them are rejected with exit 2 before any work is done.
inline constexpr std::uint64_t kMaxJsonFileBytes = 16ull << 20;   // config.json, index, plan JSON
inline constexpr std::uint64_t kMaxJsonLineBytes = 1ull << 20;    // one validate JSONL case
inline constexpr std::uint64_t kMaxJsonlFileBytes = 64ull << 20;  // a validate case file
inline constexpr std::uint64_t kMaxYamlFileBytes = 1ull << 20;    // job / serve / check YAML
inline constexpr std::uint64_t kMaxCsvFileBytes = 32ull << 20;    // a catalog override
inline constexpr std::uint64_t kMaxTraceFileBytes = 1ull << 30;   // a simulate --trace file
inline constexpr std::size_t kMaxCsvRows = 100000;                // rows of one catalog CSV
inline constexpr int kMaxJsonDepth = 64;                          // nesting of [ and {
inline constexpr std::size_t kMaxNameBytes = 256;                 // a model name, path or id
inline constexpr std::size_t kMaxIdentifierBytes = 128;           // catalog ids, instance types

// Bounds of job values (docs/reliability.md: where each comes from).
inline constexpr int kMaxNodes = 16384;          // 131k GPUs at 8 per node
inline constexpr int kMaxSeqLen = 1 << 20;       // 1M-token context
inline constexpr int kMaxDenoiseSteps = 1000;    // a diffusion scheduler's training timesteps
inline constexpr int kMaxGlobalBatch = 1 << 24;  // sequences per step
inline constexpr int kMaxLoraRank = 65536;
inline constexpr int kMaxTop = 1000;  // plans to print
inline constexpr double kMaxEpochs = 1e4;
inline constexpr double kMaxTokens = 1e16;  // 10,000 T tokens (largest runs: ~36 T)
inline constexpr double kMaxSamples = 1e14;
inline constexpr double kMaxHours = 87600;  // 10 years
inline constexpr double kMaxBudget = 1e12;
inline constexpr double kMaxQps = 1e7;
inline constexpr double kMaxSloMs = 3.6e6;  // one hour
inline constexpr int kMaxParallel = 65536;  // tp, pp, cp, ep, GPUs of one memory query
inline constexpr int kMaxBatch = 1 << 20;   // micro-batch, concurrency, grad accumulation

// Reads a whole file of at most `max_bytes`; errors name `field` and never echo more than a
// short excerpt of the path.
Result<std::string> ReadInputFile(const std::string& path, std::string_view field,
                                  std::uint64_t max_bytes);

// Replaces each invalid UTF-8 sequence (and NUL) with U+FFFD so the text can enter JSON output.
std::string SanitizeUtf8(std::string_view s);
bool IsValidUtf8(std::string_view s);

// A short, quoted, printable excerpt of user text for messages: at most `max` bytes, control
// characters escaped, invalid UTF-8 replaced: "\"abc…\" (1048576 bytes)".
std::string Excerpt(std::string_view s, std::size_t max = 60);

// Identifiers that reach deployment files (instance types, clouds, regions, accelerator ids,
// model ids, image names): 1..kMaxIdentifierBytes of [A-Za-z0-9._:/@+=-], not starting with '-'.
bool IsSafeIdentifier(std::string_view s);
Status CheckIdentifier(std::string_view s, std::string_view field);

// Display names that real catalogs hold (instance types such as "H100 x1 (via Shadeform)",
// regions such as "Texas, US"): the identifier set plus space, parentheses and comma; never
// control characters, quotes, backslashes, `$`, backticks, `;`, `|`, `&`, `<`, `>`, `#`, `*`.
bool IsSafeName(std::string_view s);
Status CheckName(std::string_view s, std::string_view field);

// A user's key for a field path: as given when it is a safe name, else a quoted excerpt.
std::string FieldKey(std::string_view key);

// Where a job value came from, so errors name the flag or the YAML path.
enum class InputSource : std::uint8_t { kFlags, kYaml };

// Checks an optional flag value: finite and within [lo, hi] (`lo_open`: > lo).
Status CheckRange(std::optional<double> v, std::string_view field, double lo, double hi,
                  bool lo_open = false);

// Case-insensitive edit distance helper used for did-you-mean hints. Returns the closest
// candidate, or empty when nothing is reasonably close.
std::string ClosestMatch(std::string_view needle, const std::vector<std::string>& candidates);

// The hint for an unknown choice: "did you mean "lora"? (one of: pretrain, full, lora, qlora)",
// or "use one of: ..." when nothing is close. `choices` come from the enum's name table
// (TrainMethodNames(), PrecisionNames(), ...).
std::string ChoiceHint(std::string_view got, const std::vector<std::string>& choices);

}  // namespace gpuplan
