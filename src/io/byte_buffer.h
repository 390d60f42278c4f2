// A growable byte buffer whose resize does not zero the new bytes: blocks are read straight into it, so the
// zero-fill a std::vector<char> does on every resize would be wasted work on the reader's serial path.
#pragma once
#include <vector>

#include "lepus/default_init_allocator.h"

namespace lepus {

using ByteBuffer = std::vector<char, DefaultInitAllocator<char>>;

}  // namespace lepus
