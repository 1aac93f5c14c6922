// SPDX-License-Identifier: Apache-2.0
// No file paragraph (layout.a_name_that_says_nothing_fails).
#pragma once
