// Errors of the training layer: weft::Error, its message led by the component's name.
#pragma once

#include <string>

#include "weft/weft.hpp"

namespace weft::parallel {

[[noreturn]] inline void fail(weftResult_t code, const char* who, const std::string& message) {
  throw Error(code, std::string(who) + ": " + message);
}

// f(), with the name put in front of any weft::Error it throws.
template <typename F>
auto withContext(const char* who, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error& e) {
    fail(e.code(), who, e.message());
  }
}

}  // namespace weft::parallel
