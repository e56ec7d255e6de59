/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libweft.so is weft_client and what it needs, linked whole; this file only
 * gives the shared library target a source of its own (client/CMakeLists.txt).
 */
#include "weft/weft.h"
