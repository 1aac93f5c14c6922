// SPDX-License-Identifier: Apache-2.0
// The one folder of this planted tree's detail/ (layout.a_test_astray_fails).
#pragma once
