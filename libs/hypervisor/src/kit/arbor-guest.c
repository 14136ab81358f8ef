/*
 * arbor-guest: the one program Arbor runs in every machine, whatever its image holds. Linked
 * statically (gcc -static), so it needs nothing of the image: no shell, no perl, no libc. It lives
 * read-only at /.arbor/bin/arbor-guest (the guest kit, see guest-kit.ts) and does, by its first
 * argument:
 *
 *   exec [--output FILE|-] [--cwd DIR] [--env-file FILE] [--timeout SECS] [--env K=V]... -- ARGV...
 *       Runs ARGV with stdout and stderr kept in the order it wrote them (see run_exec) and exits
 *       with its exit code (128 + signal when killed, 124 on timeout, 125 when it could not set
 *       up, 127 when ARGV cannot be started, 1 when DIR cannot be entered).
 *   supervise -- ARGV... [-- ARGV...]...
 *       A machine's PID 1 once its init script is done: starts each service, starts it again half
 *       a second after it exits, and reaps every orphan.
 *   kill-tree PID
 *       Stops, then kills, PID and every process descended from it.
 *   sshd-environment FILE
 *       Prints sshd_config SetEnv lines for the variables of FILE (/etc/environment).
 *   reseed
 *       Mixes stdin into the kernel's entropy pool and reseeds its generator at once (a machine
 *       restored from memory starts with its siblings' generator state).
 *   set-clock NANOSECONDS
 *       Sets the system clock (nanoseconds since the epoch).
 *   identity HOSTNAME MACHINE_ID NANOSECONDS IP SSHD_PID_FILE SSHD_LOG SSHD_ENVIRONMENT_CONF
 *       Makes a qemu guest the machine it is to be, in one process (see identity_main); the rest
 *       of what it needs comes on stdin.
 *   memory-sink FILE                                (run on the host)
 *       Copies stdin (QEMU's migration stream: a socket) into FILE, created 0600, until its end.
 *   memory-source FILE                              (run on the host)
 *       Sends FILE to stdout (QEMU's incoming migration socket) with sendfile. Exits 3 when the
 *       reader closed first.
 *   prepare-tree [--shift FIRST:COUNT] DIR          (run on the host, as root)
 *       Checks an image's root filesystem before Arbor uses it: no mount point inside, no hard
 *       link to a file outside it. Prints "entries=N bytes=B" (B: the disk its entries use, as
 *       du counts it; hard-linked files once per link). With --shift, then makes it a
 *       sandbox layer: ids moved into the machines' range (ids past COUNT become the overflow id),
 *       device nodes removed, setuid and setgid bits cleared, trusted.* attributes removed. Every
 *       step is relative to an open directory and never follows a symlink, so nothing the image
 *       planted can point it at a host file.
 *
 * Linux x86-64 only. Errors go to stderr prefixed with "arbor-exec: " (exec) or "arbor-guest: ".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/random.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define SETUP_FAILED 125
#define TIMED_OUT 124
/* The largest single write a command may make: the kernel's largest datagram. */
#define MAX_RECORD (8 << 20)

static const char *prefix = "arbor-guest";

static void fail(const char *what) {
  fprintf(stderr, "%s: %s: %s\n", prefix, what, strerror(errno));
  exit(SETUP_FAILED);
}

static void usage(const char *message) {
  fprintf(stderr, "%s: %s\n", prefix, message);
  exit(2);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- processes ---------------------------------------------------------------------------- */

/* Parent of every process, from /proc/<pid>/stat ("pid (comm) state ppid ..."; comm may hold anything). */
struct proc_entry {
  pid_t pid;
  pid_t ppid;
};

static size_t list_processes(struct proc_entry **out) {
  size_t count = 0, capacity = 256;
  struct proc_entry *list = malloc(capacity * sizeof(*list));
  DIR *proc = opendir("/proc");
  if (!list || !proc) {
    free(list);
    if (proc) closedir(proc);
    *out = NULL;
    return 0;
  }
  struct dirent *entry;
  while ((entry = readdir(proc))) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, line, sizeof(line) - 1);
    close(fd);
    if (n <= 0) continue;
    line[n] = 0;
    char *close_paren = strrchr(line, ')');
    if (!close_paren) continue;
    char state;
    int ppid;
    if (sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) continue;
    if (count == capacity) {
      capacity *= 2;
      struct proc_entry *grown = realloc(list, capacity * sizeof(*list));
      if (!grown) break;
      list = grown;
    }
    list[count].pid = (pid_t)pid;
    list[count].ppid = (pid_t)ppid;
    count++;
  }
  closedir(proc);
  *out = list;
  return count;
}

/*
 * Sends `signal` to every descendant of `root` (and to root itself when include_root). Stopped
 * first, so none forks away between the listing and the kill.
 */
static void signal_tree(pid_t root, int include_root) {
  int signals[] = {SIGSTOP, SIGKILL};
  for (int round = 0; round < 2; round++) {
    struct proc_entry *list;
    size_t count = list_processes(&list);
    pid_t *tree = malloc((count + 1) * sizeof(pid_t));
    if (!tree) {
      free(list);
      return;
    }
    size_t size = 0;
    tree[size++] = root;
    for (size_t next = 0; next < size; next++) {
      for (size_t i = 0; i < count; i++) {
        if (list[i].ppid == tree[next] && list[i].pid != root) tree[size++] = list[i].pid;
      }
    }
    for (size_t i = include_root ? 0 : 1; i < size; i++) kill(tree[i], signals[round]);
    free(tree);
    free(list);
  }
}

static int kill_tree_main(int argc, char **argv) {
  if (argc != 2) usage("usage: kill-tree PID");
  pid_t pid = (pid_t)atol(argv[1]);
  if (pid <= 1) usage("kill-tree needs a PID above 1");
  signal_tree(pid, 1);
  return 0;
}

/* ---- exec --------------------------------------------------------------------------------- */

static volatile sig_atomic_t child_exited;
static void on_child(int signal) {
  (void)signal;
  child_exited = 1;
}

/*
 * KEY=VALUE lines as pam_env and Debian read them: comments and junk skipped, one pair of quotes
 * dropped. Each pair goes to `take`.
 */
static void read_environment_file(const char *path, void (*take)(const char *key, const char *value)) {
  FILE *file = fopen(path, "re");
  if (!file) return;
  char *line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, file)) >= 0) {
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) line[--length] = 0;
    char *key = line;
    while (*key == ' ' || *key == '\t') key++;
    char *p = key;
    if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))) continue;
    while (*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')) p++;
    if (*p != '=') continue;
    *p = 0;
    char *value = p + 1;
    size_t value_length = strlen(value);
    if (value_length >= 2 && (value[0] == '"' || value[0] == '\'') && value[value_length - 1] == value[0]) {
      value[value_length - 1] = 0;
      value++;
    }
    take(key, value);
  }
  free(line);
  fclose(file);
}

static void set_variable(const char *key, const char *value) {
  setenv(key, value, 1);
}

/* A datagram socket bound to an address of the kernel's choosing (Linux's abstract autobind). */
static int autobound_socket(struct sockaddr_un *address, socklen_t *length) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket");
  sa_family_t family = AF_UNIX;
  if (bind(fd, (struct sockaddr *)&family, sizeof(family)) < 0) fail("bind");
  *length = sizeof(*address);
  if (getsockname(fd, (struct sockaddr *)address, length) < 0) fail("getsockname");
  return fd;
}

static int same_address(const struct sockaddr_un *a, socklen_t a_length, const struct sockaddr_un *b, socklen_t b_length) {
  return a_length == b_length && memcmp(a, b, a_length) == 0;
}

static void write_all(int fd, const void *data, size_t length) {
  const char *p = data;
  while (length > 0) {
    ssize_t written = write(fd, p, length);
    if (written < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    p += written;
    length -= (size_t)written;
  }
}

static void write_record(int fd, char tag, const char *data, size_t length) {
  unsigned char header[5] = {(unsigned char)tag, (unsigned char)(length >> 24), (unsigned char)(length >> 16), (unsigned char)(length >> 8),
                             (unsigned char)length};
  write_all(fd, header, sizeof(header));
  write_all(fd, data, length);
}

/*
 * Two pipes cannot keep the order of a command's stdout and stderr writes: once both hold unread
 * data, nothing says which came first. Here stdout and stderr are two datagram sockets connected
 * to ONE receiving socket: the kernel queues each write() as one datagram, in the order the writes
 * happened, labelled by the socket it came from. Each goes out as a record: 1 byte 'o' or 'e', 4
 * bytes big-endian length, the bytes (OrderedOutputDecoder in ordered-output.ts reads them). The
 * sockets have kernel-chosen abstract addresses, so nothing is made in the machine's file system,
 * and datagrams from any other sender are dropped. When the command exits, everything it wrote is
 * already queued: the queue is drained and the program exits with its exit code. Output that
 * processes it left running write afterwards is dropped, as with a closed pipe.
 *
 * With a timeout, the program is the child subreaper of everything the command starts, so on
 * timeout it kills the whole tree, orphans included.
 */
static void set_pair(const char *pair) {
  const char *equals = strchr(pair, '=');
  if (!equals || equals == pair) return;
  char *key = strndup(pair, (size_t)(equals - pair));
  if (!key) fail("strndup");
  setenv(key, equals + 1, 1);
  free(key);
}

static int exec_main(int argc, char **argv) {
  prefix = "arbor-exec";
  const char *output = "-", *cwd = "/", *env_file = NULL;
  long timeout_secs = 0;
  const char **pairs = calloc((size_t)argc, sizeof(char *));
  size_t pair_count = 0;
  if (!pairs) fail("calloc");
  int i = 1;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--")) {
      i++;
      break;
    }
    if (i + 1 >= argc) usage("exec: an option lacks its value");
    if (!strcmp(arg, "--output")) output = argv[++i];
    else if (!strcmp(arg, "--cwd")) cwd = argv[++i];
    else if (!strcmp(arg, "--env-file")) env_file = argv[++i];
    else if (!strcmp(arg, "--timeout")) timeout_secs = atol(argv[++i]);
    else if (!strcmp(arg, "--env")) pairs[pair_count++] = argv[++i];
    else usage("exec: unknown option");
  }
  if (i >= argc) usage("usage: exec [options] -- ARGV...");
  char **command = argv + i;
  /* The environment it was started with, then the file (read here, inside the machine), then the pairs. */
  if (env_file && *env_file) read_environment_file(env_file, set_variable);
  for (size_t k = 0; k < pair_count; k++) set_pair(pairs[k]);
  free(pairs);

  int out = STDOUT_FILENO;
  if (strcmp(output, "-")) {
    out = open(output, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (out < 0) fail(output);
  }

  struct sockaddr_un receiver_address, out_address, err_address;
  socklen_t receiver_length, out_length, err_length;
  int receiver = autobound_socket(&receiver_address, &receiver_length);
  int out_socket = autobound_socket(&out_address, &out_length);
  int err_socket = autobound_socket(&err_address, &err_length);
  int size = MAX_RECORD;
  for (int k = 0; k < 2; k++) {
    int fd = k ? err_socket : out_socket;
    if (connect(fd, (struct sockaddr *)&receiver_address, receiver_length) < 0) fail("connect");
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)) < 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  }

  if (timeout_secs > 0 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) fail("prctl(PR_SET_CHILD_SUBREAPER)");
  /* SIGCHLD stays blocked except inside ppoll, so an exit is never missed between a check and the wait. */
  struct sigaction action = {0};
  action.sa_handler = on_child;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_NOCLDSTOP;
  if (sigaction(SIGCHLD, &action, NULL) < 0) fail("sigaction");
  sigset_t blocked, waiting_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &blocked, &waiting_mask) < 0) fail("sigprocmask");
  sigdelset(&waiting_mask, SIGCHLD);

  pid_t child = fork();
  if (child < 0) fail("fork");
  if (child == 0) {
    if (dup2(out_socket, STDOUT_FILENO) < 0 || dup2(err_socket, STDERR_FILENO) < 0) _exit(SETUP_FAILED);
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (chdir(cwd) < 0) {
      dprintf(STDERR_FILENO, "arbor-exec: cd %s: %s\n", cwd, strerror(errno));
      _exit(1);
    }
    execvp(command[0], command);
    dprintf(STDERR_FILENO, "%s: %s\n", command[0], strerror(errno));
    _exit(127);
  }
  /* Only the command holds the exec's stdin: its end of file is the command's to see. */
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    close(null);
  }
  close(out_socket);
  close(err_socket);

  char *buffer = malloc(2 * MAX_RECORD);
  if (!buffer) fail("malloc");
  int64_t deadline = timeout_secs > 0 ? now_ms() + timeout_secs * 1000 : 0;
  int status = 0, exited = 0, timed_out = 0;
  for (;;) {
    struct sockaddr_un from;
    socklen_t from_length = sizeof(from);
    ssize_t received = recvfrom(receiver, buffer, 2 * MAX_RECORD, MSG_DONTWAIT, (struct sockaddr *)&from, &from_length);
    if (received >= 0) {
      char tag = same_address(&from, from_length, &out_address, out_length)   ? 'o'
                 : same_address(&from, from_length, &err_address, err_length) ? 'e'
                                                                              : 0;
      if (tag && received > 0) write_record(out, tag, buffer, (size_t)received);
      continue;
    }
    if (errno != EAGAIN && errno != EINTR) fail("recv");
    if (exited) break;
    if (waitpid(child, &status, WNOHANG) == child) {
      exited = 1;
      continue; /* drain what it wrote before it exited */
    }
    int wait_ms = 200;
    if (deadline) {
      int64_t left = deadline - now_ms();
      if (left <= 0) {
        timed_out = 1;
        signal_tree(getpid(), 0);
        deadline = 0;
        continue;
      }
      if (left < wait_ms) wait_ms = (int)left;
    }
    struct pollfd ready = {.fd = receiver, .events = POLLIN};
    struct timespec wait = {.tv_sec = wait_ms / 1000, .tv_nsec = (long)(wait_ms % 1000) * 1000000};
    if (!child_exited) ppoll(&ready, 1, &wait, &waiting_mask);
    child_exited = 0;
  }
  if (strcmp(output, "-")) unlink(output);
  if (timed_out) return TIMED_OUT;
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/* ---- supervise ---------------------------------------------------------------------------- */

struct service {
  char **argv;
  pid_t pid;
  /* When an exited service starts again (monotonic ms; 0: it runs). */
  int64_t restart_at;
  /* When it last started (monotonic ms). */
  int64_t started_at;
};

static pid_t start_service(struct service *service) {
  pid_t pid = fork();
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setsid();
    execv(service->argv[0], service->argv);
    fprintf(stderr, "arbor-guest: cannot start %s: %s\n", service->argv[0], strerror(errno));
    _exit(127);
  }
  return pid < 0 ? 0 : pid;
}

/*
 * Services start at once, and again after each exit (each on its own clock): at once when it had
 * run for a second or more (sshd stopped to take a new host key: a machine's identity waits for
 * the new one), half a second later when it exited as it started (a broken service does not spin).
 * Every child is reaped, orphans re-parented to PID 1 included. SIGCHLD is blocked and waited for
 * with a timeout, so no exit is missed and no restart waits on another's.
 */
static __attribute__((noreturn)) int supervise_main(int argc, char **argv) {
  struct service services[16];
  int count = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--")) continue;
    argv[i] = NULL; /* ends the previous service's argv */
    if (i + 1 < argc && strcmp(argv[i + 1], "--")) {
      if (count == 16) usage("supervise: at most 16 services");
      services[count].argv = argv + i + 1;
      services[count].pid = 0;
      services[count].started_at = 0;
      services[count++].restart_at = 1;
    }
  }
  if (count == 0) usage("usage: supervise -- ARGV... [-- ARGV...]...");
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child, NULL);
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (int i = 0; i < count; i++) {
        if (services[i].pid == pid) {
          int64_t exited = now_ms();
          services[i].pid = 0;
          services[i].restart_at = exited - services[i].started_at >= 1000 ? exited : exited + 500;
        }
      }
    }
    int64_t now = now_ms(), next = now + 1000;
    for (int i = 0; i < count; i++) {
      if (services[i].pid || !services[i].restart_at) continue;
      if (services[i].restart_at <= now) {
        services[i].pid = start_service(&services[i]);
        services[i].started_at = now;
        services[i].restart_at = services[i].pid ? 0 : now + 500;
      }
      if (services[i].restart_at && services[i].restart_at < next) next = services[i].restart_at;
    }
    int64_t wait_ms = next > now ? next - now : 0;
    struct timespec timeout = {.tv_sec = wait_ms / 1000, .tv_nsec = (long)(wait_ms % 1000) * 1000000};
    sigtimedwait(&child, NULL, &timeout);
  }
}

/* ---- sshd-environment -------------------------------------------------------------------- */

/*
 * sshd_config SetEnv lines for the variables of an environment file: without PAM (which the kit's
 * sshd cannot count on in a foreign image) sshd reads no /etc/environment, so its sessions get
 * them this way. Quoted as sshd's argv_split reads them: "KEY=VALUE" with \\ and \" escaped.
 */
static int setenv_count;
static FILE *setenv_out;

/* One SetEnv line for them all: sshd keeps only the first SetEnv line it reads. */
static void print_setenv(const char *key, const char *value) {
  fputs(setenv_count++ ? " \"" : "SetEnv \"", setenv_out);
  fputs(key, setenv_out);
  fputc('=', setenv_out);
  for (const char *p = value; *p; p++) {
    if (*p == '\\' || *p == '"') fputc('\\', setenv_out);
    fputc(*p, setenv_out);
  }
  fputc('"', setenv_out);
}

/* The SetEnv line for the variables of the environment file `path`, onto `out`. */
static void write_sshd_environment(const char *path, FILE *out) {
  setenv_out = out;
  setenv_count = 0;
  read_environment_file(path, print_setenv);
  if (setenv_count) fputc('\n', out);
}

static int sshd_environment_main(int argc, char **argv) {
  if (argc != 2) usage("usage: sshd-environment FILE");
  write_sshd_environment(argv[1], stdout);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- reseed, set-clock -------------------------------------------------------------------- */

/* Mixes `seed` into the kernel's entropy pool and reseeds its generator at once. */
static void reseed(const char *seed, size_t length) {
  int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail("/dev/urandom");
  write_all(fd, seed, length);
  /* ENODATA: not seeded yet (early in a first boot), where the kernel seeds it itself. */
  if (ioctl(fd, RNDRESEEDCRNG, 0) < 0 && errno != ENODATA) fail("RNDRESEEDCRNG");
  close(fd);
}

static int reseed_main(void) {
  char seed[4096];
  size_t length = 0;
  ssize_t n;
  while (length < sizeof(seed) && (n = read(STDIN_FILENO, seed + length, sizeof(seed) - length)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("read");
    }
    length += (size_t)n;
  }
  reseed(seed, length);
  return 0;
}

static void set_clock(const char *nanoseconds) {
  long long nanos = atoll(nanoseconds);
  struct timespec ts = {.tv_sec = nanos / 1000000000LL, .tv_nsec = nanos % 1000000000LL};
  if (clock_settime(CLOCK_REALTIME, &ts) < 0) fail("clock_settime");
}

static int set_clock_main(int argc, char **argv) {
  if (argc != 2) usage("usage: set-clock NANOSECONDS");
  set_clock(argv[1]);
  return 0;
}

/* ---- identity ----------------------------------------------------------------------------- */

/* One field of identity's stdin: `length` bytes at `data` (not NUL-terminated). */
struct field {
  const char *data;
  size_t length;
};

/* All of stdin (at most `limit` bytes, else it fails). */
static char *read_stdin(size_t limit, size_t *length) {
  size_t capacity = 65536, used = 0;
  char *buffer = malloc(capacity);
  if (!buffer) fail("malloc");
  for (;;) {
    if (used == capacity) {
      if (capacity >= limit) usage("identity: stdin too long");
      capacity *= 2;
      if (!(buffer = realloc(buffer, capacity))) fail("realloc");
    }
    ssize_t n = read(STDIN_FILENO, buffer + used, capacity - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read stdin");
    if (n == 0) break;
    used += (size_t)n;
  }
  *length = used;
  return buffer;
}

/* The next "<decimal length>\n<bytes>" field of `input`, advancing `at`. */
static struct field next_field(const char *input, size_t length, size_t *at) {
  size_t value = 0, i = *at;
  while (i < length && input[i] >= '0' && input[i] <= '9' && value < ((size_t)1 << 40)) value = value * 10 + (size_t)(input[i++] - '0');
  if (i == *at || i >= length || input[i] != '\n' || value > length - i - 1) usage("identity: malformed stdin");
  *at = i + 1 + value;
  return (struct field){input + i + 1, value};
}

/* Writes `path` whole (created or truncated) with `mode`, from `data` and then `suffix` (may be NULL). */
static void write_file(const char *path, mode_t mode, const char *data, size_t length, const char *suffix) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) fail(path);
  if (fchmod(fd, mode) < 0) fail(path);
  write_all(fd, data, length);
  if (suffix) write_all(fd, suffix, strlen(suffix));
  if (close(fd) < 0) fail(path);
}

/* Whether the file at `path` holds exactly `content` (a missing file holds nothing). */
static int file_holds(const char *path, const struct field *content) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT && content->length == 0;
  char buffer[65536];
  size_t at = 0;
  int same = 1;
  for (ssize_t n; same && (n = read(fd, buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (size_t)n > content->length - at || memcmp(buffer, content->data + at, (size_t)n)) same = 0;
    else at += (size_t)n;
  }
  close(fd);
  return same && at == content->length;
}

static void make_dir(const char *path, mode_t mode) {
  if (mkdir(path, mode) < 0 && errno != EEXIST) fail(path);
}

/* Starts `ip -batch -` with `batch` on its stdin (a few lines: the pipe holds them all). */
static pid_t start_network(const char *ip, const struct field *batch) {
  int input[2];
  if (pipe2(input, O_CLOEXEC) < 0) fail("pipe");
  pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0) {
    dup2(input[0], STDIN_FILENO);
    execl(ip, ip, "-batch", "-", (char *)NULL);
    fprintf(stderr, "%s: cannot start %s: %s\n", prefix, ip, strerror(errno));
    _exit(127);
  }
  close(input[0]);
  write_all(input[1], batch->data, batch->length);
  close(input[1]);
  return pid;
}

/* Waits for the `ip -batch` of start_network; fails unless it succeeded. */
static void finish_network(const char *ip, pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s: %s -batch failed (status %d)\n", prefix, ip, status);
    exit(1);
  }
}

/* The pid in a pid file (0 when it is missing or holds none). */
static pid_t read_pid(const char *path) {
  char text[32] = {0};
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  return n > 0 ? (pid_t)atoi(text) : 0;
}

/* The last `lines` lines of a file on stderr (a failing service's log). */
static void print_tail(const char *path, int lines) {
  char text[4096];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  off_t size = lseek(fd, 0, SEEK_END);
  off_t from = size > (off_t)sizeof(text) - 1 ? size - (off_t)sizeof(text) + 1 : 0;
  ssize_t n = pread(fd, text, sizeof(text) - 1, from);
  close(fd);
  if (n <= 0) return;
  text[n] = 0;
  char *start = text + n;
  while (start > text && start[-1] == '\n') *--start = 0;
  for (int seen = 0; start > text; start--)
    if (start[-1] == '\n' && ++seen == lines) break;
  fputs(start, stderr);
}

/* Waits (every 10 ms, up to 120 s) until sshd's pid file names a live process; says why not on stderr. */
static int wait_for_sshd(const char *pid_file, const char *sshd_log) {
  for (int tries = 12000; tries > 0; tries--) {
    pid_t sshd = read_pid(pid_file);
    if (sshd > 0 && kill(sshd, 0) == 0) return 1;
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 10 * 1000000L};
    nanosleep(&pause, NULL);
  }
  fprintf(stderr, "%s: sshd did not start with the machine's host key and environment: ", prefix);
  print_tail(sshd_log, 3);
  fputc('\n', stderr);
  return 0;
}

/*
 * A qemu guest's identity, in one process (a dynamically linked program started in an emulated
 * guest costs tens of milliseconds): the clock, the kernel's generator reseeded with the host's
 * randomness, the network (`ip -batch`, the one child, at work while the rest is done), hostname,
 * machine id, /etc/environment, a new SSH host key and root's authorized key. stdin holds, each as "<length>\n<bytes>": the seed,
 * the host key (OpenSSH private key), its public half, root's authorized key (empty: none), the
 * environment file, and the `ip -batch` lines (empty: a machine without a NIC).
 *
 * sshd is not restarted for the new key: OpenSSH executes itself anew for every connection, and
 * that process reads the host key and authorized keys from the files, so the next connection
 * already meets the new key (a restart costs sshd's whole start, most of a second in an emulated
 * guest). Only its SetEnv line (made from /etc/environment by sshd-start, as sshd starts) is read
 * once: this waits until sshd runs (at once after a restore; at a first boot it keeps failing
 * until a key exists, and its supervisor starts it again every half second), and when the line
 * it was started with is not the one for the new /etc/environment, writes that one and has sshd
 * read its settings again (SIGHUP: it executes itself under the same pid and writes its pid file
 * once it listens), then waits for it again. (An sshd that started as the files were written may
 * have read the old line: it is caught the same way.)
 */
static int identity_main(int argc, char **argv) {
  if (argc != 8) usage("usage: identity HOSTNAME MACHINE_ID NANOSECONDS IP SSHD_PID_FILE SSHD_LOG SSHD_ENVIRONMENT_CONF < fields");
  const char *hostname = argv[1], *machine_id = argv[2], *ip = argv[4], *pid_file = argv[5], *sshd_log = argv[6], *sshd_conf = argv[7];
  size_t length, at = 0;
  char *input = read_stdin((size_t)64 << 20, &length);
  struct field seed = next_field(input, length, &at), host_key = next_field(input, length, &at), host_key_pub = next_field(input, length, &at),
               authorized_key = next_field(input, length, &at), environment = next_field(input, length, &at),
               network = next_field(input, length, &at);
  umask(022);
  set_clock(argv[3]);
  reseed(seed.data, seed.length);
  /* The network is configured (by ip, a dynamically linked program) while the files are written. */
  pid_t network_pid = network.length ? start_network(ip, &network) : 0;
  make_dir("/etc", 0755);
  make_dir("/etc/ssh", 0755);
  make_dir("/root", 0700);
  make_dir("/root/.ssh", 0700);
  if (chmod("/root/.ssh", 0700) < 0) fail("/root/.ssh");
  write_file("/etc/environment", 0644, environment.data, environment.length, NULL);
  write_file("/etc/hostname", 0644, hostname, strlen(hostname), "\n");
  if (sethostname(hostname, strlen(hostname)) < 0) fail("sethostname");
  char hosts[512];
  int hosts_length = snprintf(hosts, sizeof(hosts), "127.0.0.1\tlocalhost\n127.0.1.1\t%s\n", hostname);
  if (hosts_length < 0 || (size_t)hosts_length >= sizeof(hosts)) usage("identity: hostname too long");
  write_file("/etc/hosts", 0644, hosts, (size_t)hosts_length, NULL);
  write_file("/etc/machine-id", 0644, machine_id, strlen(machine_id), "\n");
  DIR *keys = opendir("/etc/ssh");
  if (!keys) fail("/etc/ssh");
  for (struct dirent *entry; (entry = readdir(keys));)
    if (!strncmp(entry->d_name, "ssh_host_", 9) && unlinkat(dirfd(keys), entry->d_name, 0) < 0 && errno != ENOENT) fail(entry->d_name);
  closedir(keys);
  write_file("/etc/ssh/ssh_host_ed25519_key", 0600, host_key.data, host_key.length, NULL);
  write_file("/etc/ssh/ssh_host_ed25519_key.pub", 0644, host_key_pub.data, host_key_pub.length, "\n");
  if (authorized_key.length) write_file("/root/.ssh/authorized_keys", 0600, authorized_key.data, authorized_key.length, "\n");
  else if (unlink("/root/.ssh/authorized_keys") < 0 && errno != ENOENT) fail("/root/.ssh/authorized_keys");
  if (network_pid) finish_network(ip, network_pid);
  /* The SetEnv line sshd is to serve, and the one it read when it started (sshd-start wrote it). */
  struct field expected = {0};
  FILE *line = open_memstream((char **)&expected.data, &expected.length);
  if (!line) fail("open_memstream");
  write_sshd_environment("/etc/environment", line);
  if (fclose(line) != 0) fail("open_memstream");
  if (!wait_for_sshd(pid_file, sshd_log)) return 1;
  if (!file_holds(sshd_conf, &expected)) {
    write_file(sshd_conf, 0644, expected.data, expected.length, NULL);
    pid_t sshd = read_pid(pid_file);
    if (unlink(pid_file) < 0 && errno != ENOENT) fail(pid_file);
    if (kill(sshd, SIGHUP) < 0) fail("kill sshd");
    if (!wait_for_sshd(pid_file, sshd_log)) return 1;
  }
  free(input);
  return 0;
}

/* ---- memory-sink, memory-source (host side) ------------------------------------------------ */

/*
 * A machine's memory moves between QEMU and its snapshot file through a socket (QEMU, chrooted
 * and barred from starting processes, can open no file of its own): these copy it in a process of
 * their own, at the disk's speed, where copying it through the worker's event loop ran at a
 * fraction of that.
 */
static int memory_sink_main(int argc, char **argv) {
  if (argc != 2) usage("usage: memory-sink FILE < stream");
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail(argv[1]);
  size_t size = 4 << 20;
  char *buffer = malloc(size);
  if (!buffer) fail("malloc");
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buffer, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read");
    if (n == 0) break;
    write_all(fd, buffer, (size_t)n);
  }
  if (close(fd) < 0) fail(argv[1]);
  return 0;
}

static int memory_source_main(int argc, char **argv) {
  if (argc != 2) usage("usage: memory-source FILE > stream");
  signal(SIGPIPE, SIG_IGN);
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(argv[1]);
  for (;;) {
    ssize_t n = sendfile(STDOUT_FILENO, fd, NULL, 1 << 30);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return 3;
    if (n < 0) fail("sendfile");
    if (n == 0) return 0;
  }
}

/* ---- prepare-tree (host side) ------------------------------------------------------------- */

struct link_count {
  ino_t inode;
  nlink_t links;
  nlink_t seen;
  /* Changed already through another of its names (the modifying pass). */
  int done;
};

struct tree_walk {
  dev_t device;
  int shift;
  uid_t first;
  uid_t count;
  unsigned long long entries, bytes;
  struct link_count *links;
  size_t links_capacity, links_used;
};

static void walk_fail(const char *path, const char *what) {
  fprintf(stderr, "arbor-guest: %s: %s%s%s\n", path, what, errno ? ": " : "", errno ? strerror(errno) : "");
  exit(1);
}

static struct link_count *link_slot(struct tree_walk *walk, ino_t inode) {
  if (walk->links_used * 2 >= walk->links_capacity) {
    size_t capacity = walk->links_capacity ? walk->links_capacity * 2 : 1024;
    struct link_count *grown = calloc(capacity, sizeof(*grown));
    if (!grown) walk_fail("prepare-tree", "out of memory");
    for (size_t i = 0; i < walk->links_capacity; i++) {
      if (!walk->links[i].links) continue;
      size_t j = walk->links[i].inode % capacity;
      while (grown[j].links) j = (j + 1) % capacity;
      grown[j] = walk->links[i];
    }
    free(walk->links);
    walk->links = grown;
    walk->links_capacity = capacity;
  }
  size_t j = inode % walk->links_capacity;
  while (walk->links[j].links && walk->links[j].inode != inode) j = (j + 1) % walk->links_capacity;
  return &walk->links[j];
}

static uid_t shifted(struct tree_walk *walk, uid_t id) {
  return walk->first + (id < walk->count ? id : 65534);
}

/* Removes trusted.* attributes (overlayfs reads its own there) through the directory's /proc path. */
static void strip_trusted_attributes(int dir, const char *name, const char *path) {
  char target[64 + NAME_MAX];
  snprintf(target, sizeof(target), "/proc/self/fd/%d/%s", dir, name);
  char names[65536];
  ssize_t length = llistxattr(target, names, sizeof(names));
  if (length < 0) {
    if (errno == ENOTSUP || errno == EOPNOTSUPP) return;
    walk_fail(path, "listing attributes");
  }
  for (ssize_t at = 0; at < length; at += (ssize_t)strlen(names + at) + 1) {
    if (strncmp(names + at, "trusted.", 8)) continue;
    if (lremovexattr(target, names + at) < 0) walk_fail(path, "removing a trusted attribute");
  }
}

/* `dir` is an open directory of the tree; `path` only names it in messages. */
static void walk_directory(struct tree_walk *walk, int dir, const char *path, int modify) {
  /* A duplicate shares the descriptor's offset: start from the top whatever read it before. */
  DIR *listing = fdopendir(dup(dir));
  if (!listing) walk_fail(path, "opening");
  rewinddir(listing);
  struct dirent *entry;
  while ((errno = 0, entry = readdir(listing))) {
    const char *name = entry->d_name;
    if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
    char child_path[4096];
    snprintf(child_path, sizeof(child_path), "%s/%s", path, name);
    struct stat st;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0) walk_fail(child_path, "stat");
    if (st.st_dev != walk->device) {
      errno = 0;
      walk_fail(child_path, "another file system is mounted here");
    }
    if (!modify) {
      walk->entries++;
      /* What it takes on disk (a sparse file counts its data, not its length), as du counts it. */
      walk->bytes += (unsigned long long)st.st_blocks * 512;
      if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
        struct link_count *slot = link_slot(walk, st.st_ino);
        if (!slot->links) {
          slot->inode = st.st_ino;
          slot->links = st.st_nlink;
          walk->links_used++;
        }
        slot->seen++;
      }
    }
    if (modify) {
      if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        if (unlinkat(dir, name, 0) < 0) walk_fail(child_path, "removing a device node");
        continue;
      }
      if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
        struct link_count *slot = link_slot(walk, st.st_ino);
        if (slot->done) continue;
        slot->done = 1;
      }
      strip_trusted_attributes(dir, name, child_path);
      if (fchownat(dir, name, shifted(walk, st.st_uid), shifted(walk, st.st_gid), AT_SYMLINK_NOFOLLOW) < 0) walk_fail(child_path, "chown");
      if (!S_ISLNK(st.st_mode)) {
        mode_t mode = st.st_mode & 07777;
        if (!S_ISDIR(st.st_mode)) mode &= ~(mode_t)(S_ISUID | S_ISGID);
        /* Not a symlink (just checked, and nothing else changes the tree): no link to follow. */
        if (fchmodat(dir, name, mode, 0) < 0) walk_fail(child_path, "chmod");
      }
    }
    if (S_ISDIR(st.st_mode)) {
      int child = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) walk_fail(child_path, "opening");
      walk_directory(walk, child, child_path, modify);
      close(child);
    }
  }
  if (errno) walk_fail(path, "reading");
  closedir(listing);
}

static int prepare_tree_main(int argc, char **argv) {
  struct tree_walk walk = {0};
  const char *root = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--shift") && i + 1 < argc) {
      unsigned long first, count;
      if (sscanf(argv[++i], "%lu:%lu", &first, &count) != 2 || count <= 65534) usage("prepare-tree: --shift FIRST:COUNT");
      walk.shift = 1;
      walk.first = (uid_t)first;
      walk.count = (uid_t)count;
    } else root = argv[i];
  }
  if (!root) usage("usage: prepare-tree [--shift FIRST:COUNT] DIR");
  int dir = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) walk_fail(root, "opening");
  struct stat st;
  if (fstat(dir, &st) < 0) walk_fail(root, "stat");
  walk.device = st.st_dev;
  walk_directory(&walk, dir, root, 0);
  for (size_t i = 0; i < walk.links_capacity; i++) {
    if (walk.links[i].links && walk.links[i].seen < walk.links[i].links) {
      errno = 0;
      fprintf(stderr, "arbor-guest: %s: inode %lu has %lu hard links, only %lu of them inside the tree\n", root,
              (unsigned long)walk.links[i].inode, (unsigned long)walk.links[i].links, (unsigned long)walk.links[i].seen);
      return 1;
    }
  }
  if (walk.shift) {
    walk_directory(&walk, dir, root, 1);
    if (fchown(dir, shifted(&walk, st.st_uid), shifted(&walk, st.st_gid)) < 0) walk_fail(root, "chown");
    if (fchmod(dir, st.st_mode & 0777) < 0) walk_fail(root, "chmod");
  }
  printf("entries=%llu bytes=%llu\n", walk.entries, walk.bytes);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) usage("usage: arbor-guest exec|supervise|kill-tree|sshd-environment|reseed|set-clock|identity|memory-sink|memory-source|prepare-tree ...");
  const char *applet = argv[1];
  argc--;
  argv++;
  if (!strcmp(applet, "exec")) return exec_main(argc, argv);
  if (!strcmp(applet, "supervise")) return supervise_main(argc, argv);
  if (!strcmp(applet, "kill-tree")) return kill_tree_main(argc, argv);
  if (!strcmp(applet, "reseed")) return reseed_main();
  if (!strcmp(applet, "sshd-environment")) return sshd_environment_main(argc, argv);
  if (!strcmp(applet, "set-clock")) return set_clock_main(argc, argv);
  if (!strcmp(applet, "identity")) return identity_main(argc, argv);
  if (!strcmp(applet, "memory-sink")) return memory_sink_main(argc, argv);
  if (!strcmp(applet, "memory-source")) return memory_source_main(argc, argv);
  if (!strcmp(applet, "prepare-tree")) return prepare_tree_main(argc, argv);
  usage("unknown command");
  return 2;
}
