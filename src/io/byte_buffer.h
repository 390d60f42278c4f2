// A growable byte buffer whose resize does not zero the new bytes: blocks are read straight into it, so the
// zero-fill a std::vector<char> does on every resize would be wasted work on the reader's serial path.
#pragma once
#include <memory>
#include <vector>

namespace lepus {

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialise: no zeroing
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using ByteBuffer = std::vector<char, DefaultInitAllocator<char>>;

}  // namespace lepus
