/**
 * Imported first by the processes that run a worker (the worker's and the embedded entry points):
 * Node's file system calls run on libuv's thread pool, four threads unless told otherwise, and a
 * worker making or destroying many machines at once issues a great many of them (records written
 * and fsync'd, cgroup files, sysfs), so four slow fsyncs would hold up every other file read.
 * libuv reads the size once, when the pool first starts: it must be set before any of that.
 */
process.env.UV_THREADPOOL_SIZE ??= '16';
