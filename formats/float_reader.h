// VW 9.11.2's number reader, reproduced bit for bit: labels, feature values and
// namespace weights all go through it, and its single-precision accumulation can differ from a correctly
// rounded strtof by an ulp, so a faster or "better" reader would break parity with VW.
#pragma once
#include <string_view>

namespace lepus {

class WarningSink;

// Reads one number from [begin, end). Grammar: leading spaces, optional '-', digits, optional '.' and
// digits (only the first 35 decimals count), optional 'e'/'E', optional '-', digits. If the next char is a
// space, TAB, '\n' or `end`, the value is sign * (acc * P(E - k)) in f32 with VW's power table (exponent
// truncated to int8); otherwise C strtof decides (so `0x10`, `+3`, `1E+2`, `inf`, `nan` work) and the number
// ends where it stopped. *stop is set to the first char not consumed; when nothing is consumed,
// *stop == begin and the result is 0. Never reads outside [begin, end).
float read_vw_float(const char* begin, const char* end, const char** stop);

// A label, importance weight or base-prediction token, as VW's float_of_string reads it: a token that is not a
// number, or (unlike VW) is NaN or infinite, reads as 0 with the warning "'TOKEN' is not a good float, replacing
// with 0". Shared by every format's label reader.
float read_label_token(std::string_view token, WarningSink& warnings);

}  // namespace lepus
