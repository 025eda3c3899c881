#!/bin/sh
# SPDX-License-Identifier: MIT
# man_example.sh PAGE.scd: the C code of the page's EXAMPLE section as the man page shows
# it (the text between its first pair of ``` fences, scdoc's \\ read as \), on stdout.
awk '/^# / { on = ($0 == "# EXAMPLE") } on && /^```/ { n++; next } on && n == 1' "$1" |
	sed 's/\\\\/\\/g'
