// Shared fixtures for library tests: the built-in catalog (loaded once; plans point into it),
// an accelerator and a preset by name. A missing one fails the test and returns an empty value.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <utility>

#include "gpuplan/catalog.h"
#include "gpuplan/model.h"

namespace gpuplan::test {

inline const Catalog& Cat() {
  static const Catalog cat = [] {
    auto r = LoadBuiltinCatalog();
    if (!r.ok()) {
      ADD_FAILURE() << r.error().ToString();
      return Catalog{};
    }
    return std::move(r).value();
  }();
  return cat;
}

inline const Accelerator& Acc(std::string_view id) {
  const Accelerator* a = Cat().FindAccelerator(id);
  if (a == nullptr) {
    ADD_FAILURE() << "no accelerator " << id;
    static const Accelerator none;
    return none;
  }
  return *a;
}

inline const ModelSpec& Preset(std::string_view name) {
  const ModelSpec* p = FindPreset(name);
  if (p == nullptr) {
    ADD_FAILURE() << "no preset named " << name;
    static const ModelSpec empty;
    return empty;
  }
  return *p;
}

}  // namespace gpuplan::test
