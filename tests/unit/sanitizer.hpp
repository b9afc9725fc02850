// Whether the tests run under AddressSanitizer (the asan preset): EDGEPLAN_UNDER_ASAN is defined then. Tests that
// set an address-space limit (RLIMIT_AS) skip under it, as its shadow memory needs the address space.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define EDGEPLAN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EDGEPLAN_UNDER_ASAN 1
#endif
#endif
