/* SPDX-License-Identifier: MIT */
/* punctual/punctual.h: every libpunctual header. */
#ifndef PUNCTUAL_H
#define PUNCTUAL_H
#include <punctual/version.h>
#include <punctual/clock.h>
#include <punctual/hist.h>
#include <punctual/slack.h>
#include <punctual/sleep.h>
#include <punctual/wait.h>
#include <punctual/cpus.h>
#include <punctual/wheel.h>
#endif
