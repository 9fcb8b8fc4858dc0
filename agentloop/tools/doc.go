// Package tools holds the functions mira-agent's model may call: read_file,
// write_file, edit_file, bash, glob, grep, remember and recall, with their
// JSON schemas, the permission checks around them and the artifacts their
// large outputs are kept in.
//
// # Calling a tool
//
// A Registry is built from a Config by New. Definitions gives the schemas to
// send with every chat request (in a fixed order, so that provider prompt
// caches keep hitting), and Call runs one tool call and returns the Result
// to send back as the tool message. Everything that goes wrong in a call
// (bad arguments, a path outside the project, a denied approval, a command
// that fails) comes back as a Result with IsError set and a message meant
// for the model, so the loop can always answer the call and go on. Call
// returns a Go error only when ctx is cancelled; the Result is still filled
// in then, so the interrupted call can be answered too.
//
// Arguments are checked against the tool's schema before the tool runs: an
// unknown field, a missing required one or a value of the wrong type is
// named in the error, together with the fields the tool takes.
//
// # Files and paths
//
// The file tools work inside the project root. Relative paths are taken
// from the root; absolute paths are accepted when they lead inside it. ".."
// and symbolic links are resolved before the check, so neither "../x" nor a
// link pointing out of the project gets through. Config.AllowPaths names
// further files or directories the user allowed explicitly.
//
// read_file shows text with line numbers as `cat -n` does (the number, a
// tab, the line), at most Limits.ReadLines lines and Limits.ReadBytes bytes
// a call, long lines clipped; a footer says how to read on. Binary files
// (a NUL byte in the first 8000 bytes) are refused. write_file and edit_file
// replace files atomically and keep their permissions; edit_file needs
// old_string to occur exactly once unless replace_all is set, and when it
// does not match it says why as well as it can: a line with the same text
// but other indentation, the number and lines of the matches, a redacted
// secret in the way. In a file with CR LF line ends, an old_string written
// with LF matches and the replacement gets CR LF too. New content holding a
// [REDACTED:…] mark the old text did not hold is refused: the model sees
// secrets redacted, and writing back what it saw would destroy them.
//
// glob lists files whose path, relative to the search directory, matches a
// pattern: `*`, `?` and `[...]` match within one path segment, `**` matches
// any number of segments and `{a,b}` alternatives are expanded; hidden
// files match like any other. The newest files come first (most recently
// modified, then by name), because a glob in the middle of a task is
// usually after the files being worked on; `.git` is skipped. grep searches with Go's regular expressions (RE2), skips `.git`,
// binary files and files over 32 MiB, and lists files in path order.
//
// bash runs `bash -c COMMAND` in the project root with stdin from /dev/null
// and stdout and stderr going to one file, so their lines stay interleaved
// as a terminal would show them. The command runs in its own process
// group; when its timeout passes or ctx is cancelled the group is sent
// SIGTERM and, two seconds later, SIGKILL, so `sleep 30 & wait` ends with
// it. Processes the command leaves running in the background are let be
// when it exits normally. NO_COLOR=1, PAGER=cat and GIT_PAGER=cat are added
// to the environment so that output is plain text. The timeout argument is
// in seconds: a model used to milliseconds that passes 600000 gets the
// maximum rather than a command killed at once.
//
// # Confinement of bash
//
// The file tools are held to the project by the path checks above; a
// shell command cannot be checked that way, so on Linux bash's commands
// run under the kernel's Landlock LSM (Linux 5.13 and later). A command may
// then change files only under the project root, Config.AllowPaths, a
// private temporary directory made for it (its TMPDIR, removed when it
// ends) and a few devices (/dev/null, /dev/zero, /dev/full, /dev/random,
// /dev/urandom, /dev/tty, /dev/ptmx, /dev/pts); creating, writing,
// truncating, renaming or deleting anything else fails with EACCES
// ("Permission denied"), and the result then says why. Reading, listing
// and executing stay allowed everywhere, and so do the network, UNIX
// sockets and signals. The command starts a session of its own without a
// controlling terminal, and with no_new_privs set, so set-user-ID programs
// such as sudo gain nothing.
//
// Landlock binds the process that applies it and everything it starts,
// for good, so it is applied in a helper: bash re-executes the running
// binary (/proc/self/exe) with MIRA_SANDBOX_EXEC set to the paths to
// allow, and this package's init, seeing it, applies Landlock and
// executes the shell in place (same process, so timeouts and signals
// work as before). Any binary linking this package, tests included,
// can thus confine its commands. Where the kernel has no Landlock the
// commands run unconfined, as before, and Config.Notice is told so once,
// at the first bash call.
//
// # Git's files and the store
//
// Landlock allows by path and hierarchy, so a right on the project root
// reaches .git/config and .git/hooks, from which git runs commands at the
// user's next git command, outside any sandbox. Unless
// Config.AllowGitConfig is set, the file tools write nothing in a git
// directory, and bash's helper starts in a user and mount namespace of its
// own (when the kernel allows one): before Landlock it mounts each of the
// project's git directories on itself (a mount point cannot be renamed or
// removed) and their config, config.worktree, commondir and hooks
// read-only, then drops every capability it holds in the namespace, so
// the shell cannot undo the mounts (nor can it under Landlock, which
// refuses mount operations). Around every confined command a gitGuard
// records those files and puts back what the command changed or created;
// without namespaces that is the whole protection, and Config.Notice says
// so once. Config.Protect (the memory store) is refused to the file tools
// and mounted read-only for bash's commands in the same way.
//
// # Permissions
//
// write_file, edit_file and bash change things, so they run only when the
// Policy allows them: a tool named in Policy.Allow (--allow TOOL) or every
// tool with Policy.Yes (--yes) runs without asking; otherwise, in an
// interactive session, the Approver is asked with a short summary of the
// call (the command, or the file and a preview of the change), and its
// answer may allow this call, allow the tool for the rest of the session,
// or decline. A session that is not interactive denies what it may not ask
// about. A denied call reaches the model as an error Result saying who
// denied it and what the user can do.
//
// # Artifacts and redaction
//
// A result longer than Limits.ResultBytes bytes or Limits.ResultLines lines
// is not sent whole: the model gets its first and last lines and a
// reference artifact://ID, and the whole text is stored as
// <store>/artifacts/<scope>/<ID>.txt. read_file and grep take artifact://ID
// as a path (read_file with offset and limit), so the model can page
// through it. Result.Artifacts lists the files written by a call, relative
// to the store root, for the caller to commit. read_file itself pages
// instead of storing: its output is already a view of a file.
//
// Tool results and artifacts are passed through Redact first: every secret
// internal/secret finds is replaced by [REDACTED:<rule>] (a private key
// block as a whole, keeping its line count so line numbers stay right),
// because tool results are stored in the conversation and committed to git.
// The loop should pass the turns it stores through Redact as well.
package tools
