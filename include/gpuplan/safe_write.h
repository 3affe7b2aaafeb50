// Writing output files safely (docs/reliability.md): each file goes to a temporary created
// exclusively in the target directory (mkstemp: O_CREAT|O_EXCL, never following a planted
// link), is flushed and fsynced, then renamed over the destination. A destination that exists
// (a file, a link, a dangling link) is refused without `force`; a destination that is a
// directory or a symbolic link is refused even with it. Either every file appears or none does
// (all temporaries are written before the first rename; the check happens before any write).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.h"

namespace gpuplan {

struct FileToWrite {
  std::string name;  // a plain file name: no '/', not "." or "..", no leading '.', no control chars
  std::string contents;
};

// Writes `files` into `dir` (created when missing). Errors name `field` (e.g. "-o").
// Returns the paths written, in order.
Result<std::vector<std::string>> SafeWriteFiles(const std::string& dir,
                                                const std::vector<FileToWrite>& files, bool force,
                                                const std::string& field);

// Writes all of `data` to a stdio stream and flushes it; an error (a full disk, /dev/full, a
// closed stdout, a broken pipe) comes back as kIo naming `field`.
Status WriteAllToStream(std::FILE* stream, std::string_view data, const std::string& field);

}  // namespace gpuplan
