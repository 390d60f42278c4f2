// std::allocator, except that an element made with no arguments is default-initialised (left unwritten for a
// trivial type) rather than zeroed, so a vector's resize() costs nothing for a writer that fills the new elements
// right after: the reader's byte blocks (read straight into) and an example's features.
#pragma once
#include <memory>
#include <new>
#include <utility>

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

}  // namespace lepus
