// Lets a unit test that spends 10-50 s under AddressSanitizer (whole models through the tile simulator, exhaustive
// offset searches) skip itself in the sanitizer build: `make test` runs it in the release build right after.
#pragma once

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
#define STOWAGE_RELEASE_BUILD_ONLY(why) GTEST_SKIP() << "runs in the release build only: " << why
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STOWAGE_RELEASE_BUILD_ONLY(why) GTEST_SKIP() << "runs in the release build only: " << why
#endif
#endif
#ifndef STOWAGE_RELEASE_BUILD_ONLY
#define STOWAGE_RELEASE_BUILD_ONLY(why) static_cast<void>(0)
#endif
