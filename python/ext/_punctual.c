/* SPDX-License-Identifier: MIT */
/*
 * _punctual.c: the C extension under the Python package punctual, a thin layer over
 * libpunctual (linked statically, its symbols kept inside this module).
 *
 * Every argument is checked here before the library sees it, and every message names the
 * function and the argument ("sleep_until(): deadline_ns must be ..."): a wrong type is a
 * TypeError, a negative or NaN value a ValueError, a value too large for the library's
 * int64 ns an OverflowError, and a -errno from the library an OSError with that errno.
 * Waits release the GIL. A long wait runs in chunks of at most CHUNK_NS, so that a signal
 * handler (KeyboardInterrupt) runs within a chunk.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>

#include <punctual/punctual.h>

/* The longest stretch a wait spends without looking at Python's signal flags: a signal
 * handler runs at most this (and a chunk's lateness) after its signal. */
#define CHUNK_NS INT64_C(20000000)
/* The precision of the chunks before the last one. The last one starts CHUNK_NS / 2 or more
 * before the deadline, far more than this: a late chunk never makes the last one late. */
#define CHUNK_PRECISION_NS INT64_C(1000000)
/* What sleep_until's precision is when the caller names none (punctual run --precise's). */
#define DEFAULT_PRECISION_NS INT64_C(10000)

/* Raises OSError for a library error (-errno); returns NULL for the caller to return. */
static PyObject *raise_errno(int neg_errno)
{
	errno = -neg_errno;
	return PyErr_SetFromErrno(PyExc_OSError);
}

/* Reads o as an int64 of ns, >= 0, for the argument label ("sleep_until(): deadline_ns"):
 * 0, or -1 with TypeError (not an integer), ValueError (negative) or OverflowError (beyond
 * int64) set. */
static int arg_ns(PyObject *o, const char *label, int64_t *out)
{
	if (!PyIndex_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int of nanoseconds, not %.200s", label,
		             Py_TYPE(o)->tp_name);
		return -1;
	}
	PyObject *i = PyNumber_Index(o);
	if (!i)
		return -1;
	int overflow = 0;
	long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
	Py_DECREF(i);
	if (v == -1 && PyErr_Occurred())
		return -1;
	/* the value shown only where it fits: the repr of a huge int can fail */
	if (overflow < 0) {
		PyErr_Format(PyExc_ValueError, "%s must be >= 0", label);
		return -1;
	}
	if (overflow > 0) {
		PyErr_Format(PyExc_OverflowError, "%s is beyond int64 nanoseconds (292 years)",
		             label);
		return -1;
	}
	if (v < 0) {
		PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %lld", label, v);
		return -1;
	}
	*out = (int64_t)v;
	return 0;
}

/* Sleeps until deadline, at most CHUNK_NS between looks at signals; 0 or -1 with an
 * exception set (a signal handler's, or OSError). Only the last chunk, CHUNK_NS / 2 to
 * CHUNK_NS long, waits with the caller's precision; the others end by CHUNK_NS / 2 before
 * the deadline, so that their lateness (CHUNK_PRECISION_NS) never makes the last late. */
static int wait_until_slack(int64_t deadline, int64_t precision);

/* The thread's timer slack as it was before: the plan's own slack (the chunks' 0.5 ms, or
 * 1 ns) would stay behind, for time.sleep too, after a handler's exception as after the
 * end. */
static int wait_until(int64_t deadline, int64_t precision)
{
	int64_t slack = pn_slack_get();
	int st = wait_until_slack(deadline, precision);
	if (slack > 0 && pn_slack_get() != slack)
		pn_slack_set(slack);
	return st;
}

static int wait_until_slack(int64_t deadline, int64_t precision)
{
	for (;;) {
		int64_t now = pn_now();
		int last = deadline - now <= CHUNK_NS;
		int64_t end = last ? deadline : now + CHUNK_NS;
		if (!last && end > deadline - CHUNK_NS / 2)
			end = deadline - CHUNK_NS / 2;
		/* the GIL released by hand: clang-format cannot indent Py_BEGIN_ALLOW_THREADS */
		PyThreadState *save = PyEval_SaveThread();
		int r = pn_sleep_until(end, last ? precision : CHUNK_PRECISION_NS);
		PyEval_RestoreThread(save);
		if (r < 0) {
			raise_errno(r);
			return -1;
		}
		if (last)
			return 0;
		if (PyErr_CheckSignals() < 0)
			return -1;
	}
}

/* Reads an optional budget in ppm (None: *given = 0) for the argument label: 0, or -1 with
 * TypeError (not an int) or ValueError (out of range) set. */
static int arg_budget(PyObject *o, const char *label, int *given, int32_t *ppm)
{
	*given = 0;
	if (!o || o == Py_None)
		return 0;
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int of ppm, not %.200s", label,
		             Py_TYPE(o)->tp_name);
		return -1;
	}
	int overflow = 0;
	long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
	if (v == -1 && PyErr_Occurred())
		return -1;
	if (overflow || v < PN_SLEEP_BUDGET_AUTO || v > PN_SLEEP_BUDGET_FULL) {
		PyErr_Format(PyExc_ValueError, "%s must be -1 (auto) or 0..%d", label,
		             PN_SLEEP_BUDGET_FULL);
		return -1;
	}
	*given = 1;
	*ppm = (int32_t)v;
	return 0;
}

PyDoc_STRVAR(sleep_until_doc,
             "sleep_until(deadline_ns, precision_ns=10000, budget_ppm=None)\n--\n\n"
             "Sleeps until deadline_ns (now_ns()'s clock): never early, late by at most\n"
             "precision_ns unless the CPU stalls. budget_ppm sets the thread's spin budget\n"
             "for this wait (-1: the measured default), then puts the previous one back.\n"
             "Releases the GIL; signal handlers run within 25 ms.");

static PyObject *py_sleep_until(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"deadline_ns", "precision_ns", "budget_ppm", NULL};
	PyObject *d_obj, *p_obj = NULL, *b_obj = NULL;
	int64_t deadline, precision = DEFAULT_PRECISION_NS;
	int32_t budget = 0, before = 0;
	int given;
	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:sleep_until", names, &d_obj, &p_obj,
	                                 &b_obj))
		return NULL;
	if (arg_ns(d_obj, "sleep_until(): deadline_ns", &deadline) < 0 ||
	    (p_obj && arg_ns(p_obj, "sleep_until(): precision_ns", &precision) < 0) ||
	    arg_budget(b_obj, "sleep_until(): budget_ppm", &given, &budget) < 0)
		return NULL;
	if (given) {
		before = pn_sleep_budget();
		int r = pn_sleep_set_budget(budget);
		if (r < 0)
			return raise_errno(r);
	}
	int st = wait_until(deadline, precision);
	if (given)
		pn_sleep_set_budget(before);
	if (st < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* The most events one epoll_wait_until reports; the rest wait for the next call, as with
 * any maxevents. */
#define EVENTS_MAX 1024

/* The ready events as a list of (fd, events); NULL with an exception on failure. */
static PyObject *event_list(const struct epoll_event *ev, int n)
{
	PyObject *list = PyList_New(n);
	if (!list)
		return NULL;
	for (int i = 0; i < n; i++) {
		PyObject *t = Py_BuildValue("(iI)", ev[i].data.fd, (unsigned)ev[i].events);
		if (!t) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, i, t);
	}
	return list;
}

PyDoc_STRVAR(epoll_wait_until_doc,
             "epoll_wait_until(epfd, maxevents, deadline_ns, precision_ns)\n--\n\n"
             "epoll_wait on epfd until deadline_ns, never returning [] before it:\n"
             "[(fd, events)] as soon as an fd registered with its fd as data is ready.\n"
             "A signal handler runs at once (its exception propagates), then the wait\n"
             "goes on to the same deadline. Releases the GIL.");

static PyObject *py_epoll_wait_until(PyObject *self, PyObject *args)
{
	int epfd, max;
	PyObject *d_obj, *p_obj;
	int64_t deadline, precision;
	(void)self;
	if (!PyArg_ParseTuple(args, "iiOO:epoll_wait_until", &epfd, &max, &d_obj, &p_obj))
		return NULL;
	if (arg_ns(d_obj, "epoll_wait_until(): deadline_ns", &deadline) < 0 ||
	    arg_ns(p_obj, "epoll_wait_until(): precision_ns", &precision) < 0)
		return NULL;
	if (epfd < 0 || max <= 0)
		return PyErr_Format(PyExc_ValueError,
		                    "epoll_wait_until(): epfd must be >= 0 and maxevents > 0");
	if (max > EVENTS_MAX)
		max = EVENTS_MAX;
	struct epoll_event *ev = PyMem_Calloc((size_t)max, sizeof(*ev));
	if (!ev)
		return PyErr_NoMemory();
	int n;
	for (;;) {
		PyThreadState *save = PyEval_SaveThread();
		n = pn_epoll_wait_until(epfd, ev, max, deadline, precision);
		PyEval_RestoreThread(save);
		if (n != -EINTR)
			break;
		if (PyErr_CheckSignals() < 0) {
			PyMem_Free(ev);
			return NULL;
		}
	}
	PyObject *r = n < 0 ? raise_errno(n) : event_list(ev, n);
	PyMem_Free(ev);
	return r;
}

PyDoc_STRVAR(seconds_to_ns_doc,
             "seconds_to_ns(seconds, name='seconds')\n--\n\n"
             "A duration in seconds (a real number) as int ns, rounded up, so that a sleep\n"
             "of it is never shorter. name labels the messages ('sleep(): seconds'):\n"
             "ValueError for a negative or NaN value, OverflowError beyond 2**62 ns\n"
             "(146 years) or for infinity, TypeError for a non-number.");

/* Raises what a conversion of o that overflowed means: ValueError for a negative o
 * (-10**400 is out of range below, as -1 is), else OverflowError. Returns NULL. */
static PyObject *too_large(PyObject *o, const char *name)
{
	PyObject *zero = PyLong_FromLong(0);
	int neg = zero ? PyObject_RichCompareBool(o, zero, Py_LT) : -1;
	Py_XDECREF(zero);
	if (neg < 0)
		return NULL;
	if (neg)
		return PyErr_Format(PyExc_ValueError, "%s must be >= 0", name);
	return PyErr_Format(PyExc_OverflowError, "%s is too large (over 146 years)", name);
}

static PyObject *py_seconds_to_ns(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"seconds", "name", NULL};
	PyObject *o;
	const char *name = "seconds";
	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:seconds_to_ns", names, &o, &name))
		return NULL;
	PyNumberMethods *nb = Py_TYPE(o)->tp_as_number;
	if (!PyFloat_Check(o) && !PyIndex_Check(o) && !(nb && nb->nb_float))
		return PyErr_Format(PyExc_TypeError, "%s must be a real number, not %.200s", name,
		                    Py_TYPE(o)->tp_name);
	double s = PyFloat_AsDouble(o);
	if (s == -1.0 && PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError))
			return NULL;
		PyErr_Clear();
		return too_large(o, name);
	}
	if (isnan(s))
		return PyErr_Format(PyExc_ValueError, "%s must not be NaN", name);
	if (s < 0)
		return PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %R", name, o);
	/* 2^62 ns leaves room to add it to any pn_now() of a running system */
	double ns = ceil(s * 1e9);
	if (!(ns <= 4611686018427387904.0))
		return too_large(o, name);
	return PyLong_FromLongLong((long long)ns);
}

static PyObject *py_now_ns(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLongLong(pn_now());
}

static PyObject *py_cpu_count(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLong(pn_cpu_count());
}

static PyObject *py_cpu_count_fresh(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLong(pn_cpu_count_fresh());
}

/* Sets d[key] = v (a new reference, consumed); -1 on failure. */
static int put(PyObject *d, const char *key, PyObject *v)
{
	int r = v ? PyDict_SetItemString(d, key, v) : -1;
	Py_XDECREF(v);
	return r;
}

/* s as str (a path or a line holding paths: any byte but NUL, undecodable ones escaped as
 * os.fsdecode does), or None for NULL or "". */
static PyObject *str_or_none(const char *s)
{
	if (!s || !s[0])
		Py_RETURN_NONE;
	return PyUnicode_DecodeFSDefault(s);
}

/* v as int, or None where it is not known. */
static PyObject *int_if(int known, long long v)
{
	if (!known)
		Py_RETURN_NONE;
	return PyLong_FromLongLong(v);
}

/* An error's description, or None for 0. */
static PyObject *error_or_none(int neg_errno)
{
	if (!neg_errno)
		Py_RETURN_NONE;
	return PyUnicode_FromString(pn_strerror(neg_errno));
}

/* One cgroup level as `punctual cpus --json` writes it. */
static PyObject *level_dict(const struct pn_cpu_level *l)
{
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	if (put(d, "path", str_or_none(l->path)) < 0 ||
	    put(d, "quota_us", int_if(l->quota_us > 0, l->quota_us)) < 0 ||
	    put(d, "period_us", int_if(l->period_us > 0, l->period_us)) < 0 ||
	    put(d, "shares", int_if(l->shares >= 0, l->shares)) < 0 ||
	    put(d, "error", error_or_none(l->status)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* The cgroup part of cpu_info(): version, controller, path, dir, error and levels. */
static PyObject *cgroup_dict(const struct pn_cpu_info *in)
{
	int n = in->n_levels < PN_CPU_LEVELS_MAX ? in->n_levels : PN_CPU_LEVELS_MAX;
	PyObject *levels = PyList_New(0);
	PyObject *d = levels ? PyDict_New() : NULL;
	if (!d) {
		Py_XDECREF(levels);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		PyObject *l = level_dict(&in->levels[i]);
		if (!l || PyList_Append(levels, l) < 0) {
			Py_XDECREF(l);
			Py_DECREF(levels);
			Py_DECREF(d);
			return NULL;
		}
		Py_DECREF(l);
	}
	const char *controller = in->cgroup_v1_cpu ? "v1" : "v2";
	if (put(d, "version", str_or_none(pn_cgroup_version_name(in->cgroup_version))) < 0 ||
	    put(d, "controller", str_or_none(in->cgroup_path[0] ? controller : NULL)) < 0 ||
	    put(d, "path", str_or_none(in->cgroup_path)) < 0 ||
	    put(d, "dir", str_or_none(in->cgroup_dir)) < 0 ||
	    put(d, "error", error_or_none(in->cgroup_error)) < 0) {
		Py_DECREF(levels);
		Py_DECREF(d);
		return NULL;
	}
	if (put(d, "levels", levels) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* The limit part: cpus, count, path and level, or None without a limit. */
static PyObject *limit_dict(const struct pn_cpu_info *in)
{
	if (!(in->limit > 0))
		Py_RETURN_NONE;
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	if (put(d, "cpus", PyFloat_FromDouble(in->limit)) < 0 ||
	    put(d, "count", PyLong_FromLong(in->limit_count)) < 0 ||
	    put(d, "path", str_or_none(in->limit_path)) < 0 ||
	    put(d, "level", PyLong_FromLong(in->limit_level)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyObject *info_dict(const struct pn_cpu_info *in)
{
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	if (put(d, "count", PyLong_FromLong(in->count)) < 0 ||
	    put(d, "reason", str_or_none(in->reason)) < 0 ||
	    put(d, "online", int_if(in->online > 0, in->online)) < 0 ||
	    put(d, "affinity", int_if(in->affinity > 0, in->affinity)) < 0 ||
	    put(d, "affinity_list", str_or_none(in->affinity_list)) < 0 ||
	    put(d, "rounding", str_or_none(pn_cpu_rounding_name(in->rounding))) < 0 ||
	    put(d, "rounding_invalid", str_or_none(in->rounding_invalid)) < 0 ||
	    put(d, "override", int_if(in->override != 0, in->override)) < 0 ||
	    put(d, "override_invalid", str_or_none(in->override_invalid)) < 0 ||
	    put(d, "cgroup", cgroup_dict(in)) < 0 || put(d, "limit", limit_dict(in)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

PyDoc_STRVAR(cpu_info_doc,
             "cpu_info()\n--\n\n"
             "The CPU count evaluated now and why (pn_cpu_info), as a dict of the shape\n"
             "`punctual cpus --json` writes: None where a value is unknown or absent.");

static PyObject *py_cpu_info(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	/* 19 KiB: on the heap, as the calling thread's stack may be small */
	struct pn_cpu_info *in = PyMem_Malloc(sizeof(*in));
	if (!in)
		return PyErr_NoMemory();
	int r = pn_cpu_info(in);
	PyObject *d = r < 0 ? raise_errno(r) : info_dict(in);
	PyMem_Free(in);
	return d;
}

static PyObject *py_slack_get(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLongLong(pn_slack_get());
}

static PyObject *py_slack_set(PyObject *self, PyObject *o)
{
	int64_t ns;
	(void)self;
	if (arg_ns(o, "slack_set(): ns", &ns) < 0)
		return NULL;
	int r = pn_slack_set(ns);
	if (r < 0)
		return raise_errno(r);
	Py_RETURN_NONE;
}

static PyObject *py_budget_get(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLong(pn_sleep_budget());
}

static PyObject *py_budget_set(PyObject *self, PyObject *o)
{
	int given;
	int32_t ppm;
	(void)self;
	if (o == Py_None)
		return PyErr_Format(PyExc_TypeError,
		                    "budget_set(): budget_ppm must be an int of ppm, not NoneType");
	if (arg_budget(o, "budget_set(): budget_ppm", &given, &ppm) < 0)
		return NULL;
	int r = pn_sleep_set_budget(ppm);
	if (r < 0)
		return raise_errno(r);
	Py_RETURN_NONE;
}

static PyObject *py_sleep_stats(PyObject *self, PyObject *unused)
{
	struct pn_sleep_stats st;
	(void)self;
	(void)unused;
	int r = pn_sleep_stats(&st);
	if (r < 0)
		return raise_errno(r);
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	if (put(d, "sleeps", PyLong_FromUnsignedLongLong(st.sleeps)) < 0 ||
	    put(d, "past", PyLong_FromUnsignedLongLong(st.past)) < 0 ||
	    put(d, "early", PyLong_FromUnsignedLongLong(st.early)) < 0 ||
	    put(d, "late", PyLong_FromUnsignedLongLong(st.late)) < 0 ||
	    put(d, "kernel_only", PyLong_FromUnsignedLongLong(st.kernel_only)) < 0 ||
	    put(d, "slept_ns", PyLong_FromLongLong(st.slept_ns)) < 0 ||
	    put(d, "spun_ns", PyLong_FromLongLong(st.spun_ns)) < 0 ||
	    put(d, "late_p50_ns", PyLong_FromLongLong(st.late_p50_ns)) < 0 ||
	    put(d, "late_p99_ns", PyLong_FromLongLong(st.late_p99_ns)) < 0 ||
	    put(d, "late_budget", PyLong_FromUnsignedLongLong(st.late_budget)) < 0 ||
	    put(d, "shared_waits", PyLong_FromUnsignedLongLong(st.shared_waits)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

static PyMethodDef methods[] = {
        {"sleep_until", (PyCFunction)(void (*)(void))py_sleep_until, METH_VARARGS | METH_KEYWORDS,
         sleep_until_doc},
        {"seconds_to_ns", (PyCFunction)(void (*)(void))py_seconds_to_ns,
         METH_VARARGS | METH_KEYWORDS, seconds_to_ns_doc},
        {"epoll_wait_until", py_epoll_wait_until, METH_VARARGS, epoll_wait_until_doc},
        {"now_ns", py_now_ns, METH_NOARGS, "CLOCK_MONOTONIC in ns (pn_now)."},
        {"cpu_count", py_cpu_count, METH_NOARGS,
         "The cached quota-aware CPU count (pn_cpu_count)."},
        {"cpu_count_fresh", py_cpu_count_fresh, METH_NOARGS,
         "The CPU count evaluated now (pn_cpu_count_fresh)."},
        {"cpu_info", py_cpu_info, METH_NOARGS, cpu_info_doc},
        {"slack_get", py_slack_get, METH_NOARGS, "The calling thread's timer slack in ns."},
        {"slack_set", py_slack_set, METH_O, "Sets the calling thread's timer slack (0: default)."},
        {"budget_get", py_budget_get, METH_NOARGS, "The calling thread's spin budget in ppm."},
        {"budget_set", py_budget_set, METH_O, "Sets the calling thread's spin budget in ppm."},
        {"sleep_stats", py_sleep_stats, METH_NOARGS, "The calling thread's sleep counters."},
        {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
        PyModuleDef_HEAD_INIT,
        "_punctual",
        "libpunctual for Python (see the punctual package).",
        -1,
        methods,
        NULL,
        NULL,
        NULL,
        NULL,
};

/* Visible by hand: the module is built with -fvisibility=hidden, and before 3.9
 * PyMODINIT_FUNC does not export the function. */
__attribute__((visibility("default"))) PyMODINIT_FUNC PyInit__punctual(void);

PyMODINIT_FUNC PyInit__punctual(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	if (PyModule_AddIntConstant(m, "DEFAULT_PRECISION_NS", DEFAULT_PRECISION_NS) < 0 ||
	    PyModule_AddIntConstant(m, "BUDGET_AUTO", PN_SLEEP_BUDGET_AUTO) < 0 ||
	    PyModule_AddIntConstant(m, "BUDGET_FULL", PN_SLEEP_BUDGET_FULL) < 0 ||
	    PyModule_AddIntConstant(m, "CPU_COUNT_MAX", PN_CPU_COUNT_MAX) < 0 ||
	    PyModule_AddStringConstant(m, "LIBRARY_VERSION", pn_version()) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
