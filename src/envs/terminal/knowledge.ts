// Short manual pages for the shell the terminal environment implements, in our own words.
const PAGES: [string, string, string][] = [
  [
    'ls',
    'ls [-l] [-a] [-1] [FILE]...',
    'List directory contents, sorted by name. Several names go on one line separated by two spaces; when the output is a pipe, one name per line. -a also lists entries starting with a dot, including . and .. . -l prints one line per entry: mode, link count, owner, group, size in bytes, modification time (Mon DD HH:MM) and name, after a "total N" line. A missing operand prints "ls: cannot access \'X\': No such file or directory" and exits 2.',
  ],
  [
    'cd',
    'cd [DIR]',
    'Change the working directory. With no operand go to $HOME; "cd -" goes to $OLDPWD and prints it. Errors: "bash: cd: X: No such file or directory", "bash: cd: X: Not a directory". The prompt user@host:DIR$ shows the new directory, with the home directory abbreviated to ~.',
  ],
  ['pwd', 'pwd', 'Print the absolute path of the working directory.'],
  [
    'cat',
    'cat [-n] [FILE]...',
    'Concatenate files to standard output; with no file, copy standard input. -n numbers the lines. Errors: "cat: X: No such file or directory", "cat: X: Is a directory" (exit 1).',
  ],
  [
    'echo',
    'echo [-n] [STRING]...',
    'Print the arguments separated by single spaces, then a newline. With > FILE the output replaces FILE, with >> FILE it is appended. Variables ($HOME, ${USER}, $? the last exit status) are expanded outside single quotes.',
  ],
  [
    'mkdir',
    'mkdir [-p] DIR...',
    'Create directories. -p creates missing parents and does not complain when the directory exists. Errors: "mkdir: cannot create directory ‘X’: File exists", "mkdir: cannot create directory ‘X’: No such file or directory".',
  ],
  [
    'rm',
    'rm [-r] [-f] FILE...',
    'Remove files; -r removes directories and their contents; -f ignores missing files. Errors: "rm: cannot remove \'X\': No such file or directory", "rm: cannot remove \'X\': Is a directory".',
  ],
  [
    'touch',
    'touch FILE...',
    'Create empty files, or update the modification time of existing ones. Error: "touch: cannot touch \'X\': No such file or directory" when the parent is missing.',
  ],
  [
    'cp',
    'cp [-r] SOURCE... DEST',
    'Copy files; into DEST when it is a directory. Directories need -r, otherwise "cp: -r not specified; omitting directory \'X\'". A missing source gives "cp: cannot stat \'X\': No such file or directory".',
  ],
  ['mv', 'mv SOURCE... DEST', 'Move or rename files and directories. A missing source gives "mv: cannot stat \'X\': No such file or directory".'],
  [
    'grep',
    'grep [-n] [-i] [-v] [-c] [-l] [-r] PATTERN [FILE]...',
    'Print lines matching a regular expression. -n prefixes line numbers, -i ignores case, -v inverts, -c prints the count of matching lines, -l prints only file names, -r searches directories. With several files each line is prefixed by the file name. Exit status 0 when something matched, 1 when nothing did, 2 on error ("grep: X: No such file or directory").',
  ],
  ['wc', 'wc [-l] [-w] [-c] [FILE]...', 'Count lines, words and bytes. With several files a total line follows. Columns are right-aligned to a common width.'],
  [
    'head',
    'head [-n N] [FILE]...',
    'Print the first N lines (default 10). With several files each part starts with "==> FILE <==". Error: "head: cannot open \'X\' for reading: No such file or directory".',
  ],
  ['tail', 'tail [-n N] [FILE]...', 'Print the last N lines (default 10).'],
  ['sort', 'sort [-r] [-n] [-u] [FILE]...', 'Sort lines in byte order; -n numerically, -r reversed, -u drops repeated lines.'],
  [
    'uniq',
    'uniq [-c] [-d] [FILE]',
    'Collapse adjacent repeated lines; -c prefixes each line with its count, padded to seven columns; -d prints only repeated lines. Usually used after sort.',
  ],
  [
    'find',
    'find [PATH...] [-name GLOB] [-type f|d]',
    'Walk directory trees and print every path that matches, starting with PATH itself. Errors: "find: ‘X’: No such file or directory".',
  ],
  ['export', 'export NAME=VALUE', 'Set an environment variable for this shell and its commands.'],
  ['env', 'env', 'Print the environment, one NAME=VALUE per line.'],
  ['history', 'history', 'Print the commands typed in this session, numbered from 1, the number right-aligned in five columns followed by two spaces.'],
  ['date', 'date', 'Print the current time, e.g. "Tue Mar  5 14:02:11 UTC 2024".'],
  ['ps', 'ps', 'List the processes of this terminal: PID, TTY, TIME, CMD.'],
];

export function terminalKnowledge(): string {
  const intro =
    'The shell reads one command line at a time. Commands are joined by | (pipe: the output of one is the input of the next), ; (run in sequence), && (run the next only if this one succeeded) and || (only if it failed). > FILE and >> FILE redirect standard output. An unknown command prints "bash: NAME: command not found" and sets $? to 127. After each command the shell prints the prompt user@host:DIR$.\n\n';
  return (
    intro +
    PAGES.map(([name, synopsis, body]) => `${name.toUpperCase()}(1)\n\nNAME\n    ${name}\nSYNOPSIS\n    ${synopsis}\nDESCRIPTION\n    ${body}\n`).join('\n')
  );
}
