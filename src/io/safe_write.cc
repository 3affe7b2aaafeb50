#include "gpuplan/safe_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "gpuplan/input.h"

namespace gpuplan {

namespace {

std::string Errno() { return std::strerror(errno); }

bool PlainName(const std::string& n) {
  if (n.empty() || n.size() > 255 || n[0] == '.' || n == "..") return false;
  for (char ch : n) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '/' || c < 0x20 || c == 0x7F) return false;
  }
  return true;
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Result<std::vector<std::string>> SafeWriteFiles(const std::string& dir,
                                                const std::vector<FileToWrite>& files, bool force,
                                                const std::string& field) {
  if (dir.empty() || dir.find('\0') != std::string::npos || dir.size() > 4096) {
    return MakeError(ErrorCode::kInvalidArgument, field,
                     "is not a usable directory name: " + Excerpt(dir));
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return MakeError(ErrorCode::kIo, field, "cannot create " + Excerpt(dir) + ": " + Errno(),
                       "check the path and permissions");
    }
    // Create the missing directory (and parents), like `mkdir -p`.
    std::string partial;
    for (size_t i = 0; i <= dir.size(); ++i) {
      if (i == dir.size() || (dir[i] == '/' && i > 0)) {
        partial = dir.substr(0, i);
        if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) {
          return MakeError(ErrorCode::kIo, field,
                           "cannot create " + Excerpt(partial) + ": " + Errno(),
                           "check the path and permissions");
        }
      }
    }
    if (::stat(dir.c_str(), &st) != 0) {
      return MakeError(ErrorCode::kIo, field, "cannot create " + Excerpt(dir) + ": " + Errno());
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return MakeError(ErrorCode::kIo, field, Excerpt(dir) + " is not a directory");
  }
  // Check every destination before writing anything, so a refusal leaves no files behind.
  for (const auto& f : files) {
    if (!PlainName(f.name)) {
      return MakeError(ErrorCode::kInternal, field,
                       "refusing to write a file named " + Excerpt(f.name));
    }
    const std::string dest = dir + "/" + f.name;
    struct stat ds {};
    if (::lstat(dest.c_str(), &ds) == 0) {
      if (S_ISLNK(ds.st_mode)) {
        return MakeError(ErrorCode::kIo, field,
                         Excerpt(dest) + " is a symbolic link; refusing to write through it",
                         "remove the link or choose another path");
      }
      if (S_ISDIR(ds.st_mode)) {
        return MakeError(ErrorCode::kIo, field, Excerpt(dest) + " is a directory");
      }
      if (!force) {
        return MakeError(ErrorCode::kIo, field, Excerpt(dest) + " exists",
                         "pass --force to overwrite it, or choose another path");
      }
      if (!S_ISREG(ds.st_mode)) {
        return MakeError(ErrorCode::kIo, field, Excerpt(dest) + " is not a regular file");
      }
    } else if (errno != ENOENT) {
      return MakeError(ErrorCode::kIo, field, "cannot check " + Excerpt(dest) + ": " + Errno());
    }
  }
  std::vector<std::string> tmps;
  auto cleanup = [&] {
    for (const auto& t : tmps) ::unlink(t.c_str());
  };
  for (const auto& f : files) {
    // mkstemp: a fresh name, O_CREAT|O_EXCL (a planted file or link at that name is never
    // opened), mode 0600; widened to 0644 below like an ordinary new file under umask 022.
    std::string tmpl = dir + "/." + f.name + ".XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    int fd = ::mkstemp(buf.data());
    if (fd < 0) {
      cleanup();
      return MakeError(ErrorCode::kIo, field,
                       "cannot create a file in " + Excerpt(dir) + ": " + Errno(),
                       "check that the directory is writable");
    }
    tmps.emplace_back(buf.data());
    const mode_t mask = ::umask(0);
    ::umask(mask);
    bool ok = ::fchmod(fd, 0666 & ~mask) == 0 && WriteAll(fd, f.contents) && ::fsync(fd) == 0;
    const int saved = errno;
    if (::close(fd) != 0) ok = false;
    if (!ok) {
      cleanup();
      errno = saved;
      return MakeError(ErrorCode::kIo, field,
                       "cannot write " + Excerpt(tmps.back()) + ": " + Errno(),
                       "check free space and permissions");
    }
  }
  std::vector<std::string> written;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string dest = dir + "/" + files[i].name;
    // Re-check just before the rename (a link planted since the check is refused, not followed:
    // rename replaces the link itself, never its target).
    struct stat ds {};
    if (::lstat(dest.c_str(), &ds) == 0 && (!force || S_ISLNK(ds.st_mode) || S_ISDIR(ds.st_mode))) {
      cleanup();
      return MakeError(ErrorCode::kIo, field,
                       Excerpt(dest) + " appeared while writing; nothing after it was written",
                       "retry, or choose another -o directory");
    }
    if (::rename(tmps[i].c_str(), dest.c_str()) != 0) {
      cleanup();
      return MakeError(ErrorCode::kIo, field, "cannot rename to " + Excerpt(dest) + ": " + Errno());
    }
    written.push_back(dest);
  }
  return written;
}

Status WriteAllToStream(std::FILE* stream, std::string_view data, const std::string& field) {
  if (!data.empty() && std::fwrite(data.data(), 1, data.size(), stream) != data.size()) {
    return MakeError(ErrorCode::kIo, field, std::string("write failed: ") + Errno(),
                     "check free space, or that the output is still open");
  }
  if (std::fflush(stream) != 0 || std::ferror(stream) != 0) {
    return MakeError(ErrorCode::kIo, field, std::string("write failed: ") + Errno(),
                     "check free space, or that the output is still open");
  }
  return {};
}

}  // namespace gpuplan
