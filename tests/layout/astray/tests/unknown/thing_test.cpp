// SPDX-License-Identifier: Apache-2.0
// Planted for layout.a_test_astray_fails: never compiled.
#include <gtest/gtest.h>

TEST(Same, Casething) {}
