/* SPDX-License-Identifier: MIT */
/*
 * _punctual.c: the C extension under the Python package punctual, a thin layer over
 * libpunctual (linked statically, its symbols kept inside this module).
 *
 * Every argument is checked here before the library sees it: a wrong type is a TypeError,
 * a negative value a ValueError, a value beyond int64 an OverflowError, and a -errno from
 * the library an OSError with that errno. Waits release the GIL. A long wait runs in
 * chunks of CHUNK_NS so that a signal handler (KeyboardInterrupt) runs within a chunk.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>

#include <punctual/punctual.h>

/* The longest stretch a wait spends without looking at Python's signal flags. */
#define CHUNK_NS INT64_C(50000000)
/* The precision of the chunks before the last one: their lateness only moves the last
 * chunk's start, which still ends at the deadline. */
#define CHUNK_PRECISION_NS INT64_C(1000000)
/* What sleep_until's precision is when the caller names none (punctual run --precise's). */
#define DEFAULT_PRECISION_NS INT64_C(10000)

/* Raises OSError for a library error (-errno); returns NULL for the caller to return. */
static PyObject *raise_errno(int neg_errno)
{
	errno = -neg_errno;
	return PyErr_SetFromErrno(PyExc_OSError);
}

/* Reads o as an int64 of ns, >= 0: 0, or -1 with TypeError (not an integer), OverflowError
 * (beyond int64) or ValueError (negative) set. */
static int arg_ns(PyObject *o, const char *name, int64_t *out)
{
	if (PyFloat_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be an int of nanoseconds, not float", name);
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
	if (overflow) {
		PyErr_Format(PyExc_OverflowError, "%s is out of the int64 range of nanoseconds",
		             name);
		return -1;
	}
	if (v < 0) {
		PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %lld", name, v);
		return -1;
	}
	*out = (int64_t)v;
	return 0;
}

/* Sleeps until deadline, CHUNK_NS at most between looks at signals; 0 or -1 with an
 * exception set (a signal handler's, or OSError). */
static int wait_until(int64_t deadline, int64_t precision)
{
	for (;;) {
		int64_t now = pn_now();
		int last = deadline - now <= 2 * CHUNK_NS;
		int64_t end = last ? deadline : now + CHUNK_NS;
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

/* Reads an optional budget in ppm: 0 (none given: *given = 0), or -1 with an error. */
static int arg_budget(PyObject *o, int *given, int32_t *ppm)
{
	*given = 0;
	if (!o || o == Py_None)
		return 0;
	if (PyFloat_Check(o)) {
		PyErr_SetString(PyExc_TypeError, "budget_ppm must be an int");
		return -1;
	}
	long v = PyLong_AsLong(o);
	if (v == -1 && PyErr_Occurred())
		return -1;
	if (v < PN_SLEEP_BUDGET_AUTO || v > PN_SLEEP_BUDGET_FULL) {
		PyErr_Format(PyExc_ValueError, "budget_ppm must be -1 (auto) or 0..%d, got %ld",
		             PN_SLEEP_BUDGET_FULL, v);
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
             "Releases the GIL; signal handlers run within 50 ms.");

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
	if (arg_ns(d_obj, "deadline_ns", &deadline) < 0 ||
	    (p_obj && arg_ns(p_obj, "precision_ns", &precision) < 0) ||
	    arg_budget(b_obj, &given, &budget) < 0)
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
	if (arg_ns(d_obj, "deadline_ns", &deadline) < 0 ||
	    arg_ns(p_obj, "precision_ns", &precision) < 0)
		return NULL;
	if (epfd < 0 || max <= 0)
		return PyErr_Format(PyExc_ValueError, "epfd must be >= 0 and maxevents > 0");
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
             "A duration in seconds (int or float) as int ns, rounded up, so that a sleep\n"
             "of it is never shorter: ValueError for a negative or NaN value,\n"
             "OverflowError beyond 2**62 ns (146 years), TypeError for a non-number.");

static PyObject *py_seconds_to_ns(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"seconds", "name", NULL};
	PyObject *o;
	const char *name = "seconds";
	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O|s:seconds_to_ns", names, &o, &name))
		return NULL;
	if (PyUnicode_Check(o) || PyBytes_Check(o)) {
		PyErr_Format(PyExc_TypeError, "%s must be a number of seconds, not %s", name,
		             Py_TYPE(o)->tp_name);
		return NULL;
	}
	double s = PyFloat_AsDouble(o);
	if (s == -1.0 && PyErr_Occurred())
		return NULL;
	if (isnan(s))
		return PyErr_Format(PyExc_ValueError, "%s must not be NaN", name);
	if (s < 0)
		return PyErr_Format(PyExc_ValueError, "%s must be >= 0", name);
	/* 2^62 ns leaves room to add it to any pn_now() of a running system */
	double ns = ceil(s * 1e9);
	if (!(ns <= 4611686018427387904.0))
		return PyErr_Format(PyExc_OverflowError, "%s is too large", name);
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
	if (arg_ns(o, "ns", &ns) < 0)
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
	if (o == Py_None) {
		PyErr_SetString(PyExc_TypeError, "budget_ppm must be an int");
		return NULL;
	}
	if (arg_budget(o, &given, &ppm) < 0)
		return NULL;
	int r = pn_sleep_set_budget(ppm);
	if (r < 0)
		return raise_errno(r);
	Py_RETURN_NONE;
}

/* Sets d[key] = v (a new reference, consumed); -1 on failure. */
static int put(PyObject *d, const char *key, PyObject *v)
{
	int r = v ? PyDict_SetItemString(d, key, v) : -1;
	Py_XDECREF(v);
	return r;
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

PyMODINIT_FUNC PyInit__punctual(void);

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
