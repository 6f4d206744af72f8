// The in-memory file system behind the terminal environment. Besides contents it remembers
// what the agent already knows (entries it has seen, lines it has read or written), which is
// what lets the shell label output as deterministic or pre-existing honestly.

export interface FileNode {
  type: 'file';
  content: string;
  /** Per line: has the agent seen or written this line? */
  known: boolean[];
  mtime: number;
  mode: string;
  /** The agent knows this entry exists. */
  seen: boolean;
}

export interface DirNode {
  type: 'dir';
  children: Map<string, FsNode>;
  mtime: number;
  mode: string;
  seen: boolean;
}

export type FsNode = FileNode | DirNode;

export function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (content.endsWith('\n')) lines.pop();
  return lines;
}

export function makeFile(content: string, mtime: number, known: boolean, seen = known): FileNode {
  return { type: 'file', content, known: splitLines(content).map(() => known), mtime, mode: '-rw-r--r--', seen };
}

export function makeDir(mtime: number, seen: boolean): DirNode {
  return { type: 'dir', children: new Map(), mtime, mode: 'drwxr-xr-x', seen };
}

/** Normalises `p` against `cwd` into an absolute path with no `.`/`..`/empty parts. */
export function resolvePath(cwd: string, p: string, home: string): string {
  let path = p;
  if (path === '~' || path.startsWith('~/')) path = home + path.slice(1);
  const parts = (path.startsWith('/') ? path : `${cwd}/${path}`).split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return '/' + out.join('/');
}

export function parentOf(abs: string): string {
  const i = abs.lastIndexOf('/');
  return i <= 0 ? '/' : abs.slice(0, i);
}

export function baseName(abs: string): string {
  return abs.slice(abs.lastIndexOf('/') + 1);
}

export class MemFs {
  readonly root: DirNode;
  constructor(mtime: number) {
    this.root = makeDir(mtime, true);
  }

  /** The node at an absolute path, or an errno-style reason. */
  lookup(abs: string): FsNode | 'ENOENT' | 'ENOTDIR' {
    let node: FsNode = this.root;
    for (const part of abs.split('/').filter(Boolean)) {
      if (node.type !== 'dir') return 'ENOTDIR';
      const next: FsNode | undefined = node.children.get(part);
      if (!next) return 'ENOENT';
      node = next;
    }
    return node;
  }

  get(abs: string): FsNode | undefined {
    const n = this.lookup(abs);
    return typeof n === 'string' ? undefined : n;
  }

  /** Creates every missing directory on the way (mkdir -p); used for seeding. */
  mkdirp(abs: string, mtime: number, seen: boolean): DirNode {
    let node: DirNode = this.root;
    for (const part of abs.split('/').filter(Boolean)) {
      let next = node.children.get(part);
      if (!next) {
        next = makeDir(mtime, seen);
        node.children.set(part, next);
      }
      if (next.type !== 'dir') throw new Error(`seed path ${abs} crosses a file`);
      node = next;
    }
    return node;
  }

  /** Seeds a file, creating its parents. */
  put(abs: string, content: string, mtime: number, known: boolean, seen: boolean): FileNode {
    const dir = this.mkdirp(parentOf(abs), mtime, seen);
    const f = makeFile(content, mtime, known, seen);
    dir.children.set(baseName(abs), f);
    return f;
  }

  /** All paths under a directory, depth first, children sorted (for find and tree views). */
  walk(abs: string, node: FsNode, visit: (path: string, node: FsNode) => void): void {
    visit(abs, node);
    if (node.type === 'dir') {
      for (const name of [...node.children.keys()].sort()) {
        walk2(this, abs === '/' ? `/${name}` : `${abs}/${name}`, node.children.get(name)!, visit);
      }
    }
  }
}

function walk2(fs: MemFs, abs: string, node: FsNode, visit: (path: string, node: FsNode) => void) {
  fs.walk(abs, node, visit);
}

export function cloneNode(node: FsNode, mtime: number): FsNode {
  if (node.type === 'file') return { ...node, known: node.known.slice(), mtime };
  const d = makeDir(mtime, true);
  for (const [k, v] of node.children) d.children.set(k, cloneNode(v, mtime));
  return d;
}

export function nodeSize(node: FsNode): number {
  if (node.type === 'dir') return 4096;
  return new TextEncoder().encode(node.content).length;
}

/** Limits a real Linux shell has, so hostile commands end with the shell's own errors. */
export const LIMITS = {
  /** PATH_MAX: longer paths give ENAMETOOLONG ("File name too long"). */
  pathBytes: 4096,
  /** NAME_MAX for one path component. */
  nameBytes: 255,
  /** Largest file (like `ulimit -f 2048`): writes past it give EFBIG ("File too large"); also caps one command's output. */
  fileBytes: 1 << 20,
  /** ARG_MAX: a longer argument list (bytes, NUL included) gives E2BIG ("Argument list too long"). */
  argBytes: 2 << 20,
} as const;

/** UTF-8 length without allocating the encoding. */
export function byteLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** True when an absolute path breaks PATH_MAX or NAME_MAX. */
export function nameTooLong(abs: string): boolean {
  if (byteLength(abs) > LIMITS.pathBytes) return true;
  for (const part of abs.split('/')) if (byteLength(part) > LIMITS.nameBytes) return true;
  return false;
}

type GlobTok = { k: 'star' } | { k: 'any' } | { k: 'ch'; c: string } | { k: 'set'; neg: boolean; items: [string, string][] };

/** One path component's glob (`*`, `?`, `[abc]`, `[!a-z]`) as tokens; runs of `*` collapse to one. */
function globTokens(glob: string): GlobTok[] {
  const toks: GlobTok[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (toks[toks.length - 1]?.k !== 'star') toks.push({ k: 'star' });
    } else if (c === '?') toks.push({ k: 'any' });
    else if (c === '[' && glob.indexOf(']', i + 1) > i) {
      const j = glob.indexOf(']', i + 1);
      let body = glob.slice(i + 1, j);
      const neg = body.startsWith('!') || body.startsWith('^');
      if (neg) body = body.slice(1);
      const items: [string, string][] = [];
      for (let k = 0; k < body.length; k++) {
        if (body[k + 1] === '-' && k + 2 < body.length) {
          items.push([body[k], body[k + 2]]);
          k += 2;
        } else items.push([body[k], body[k]]);
      }
      toks.push({ k: 'set', neg, items });
      i = j;
    } else toks.push({ k: 'ch', c });
  }
  return toks;
}

function tokMatches(t: GlobTok, c: string): boolean {
  if (c === '/') return false;
  if (t.k === 'any') return true;
  if (t.k === 'ch') return t.c === c;
  if (t.k === 'set') return t.items.some(([a, b]) => a <= c && c <= b) !== t.neg;
  return false;
}

/**
 * A glob matcher for one path component, in O(pattern × name) steps: the classic two-pointer
 * wildcard match that backtracks only to the last `*`, so no pattern can take exponential time
 * (a RegExp built from 30 `*` did; 50,000 `*` made an invalid RegExp). `fold` matches
 * case-insensitively (find -iname).
 */
export function globMatcher(glob: string, fold = false): { test(name: string): boolean; steps: number } {
  const toks = globTokens(fold ? glob.toLowerCase() : glob);
  const m = {
    steps: 0,
    test(name0: string): boolean {
      const name = fold ? name0.toLowerCase() : name0;
      let p = 0;
      let s = 0;
      let starP = -1;
      let starS = 0;
      while (s < name.length) {
        m.steps++;
        const t = toks[p];
        if (t && t.k === 'star') {
          starP = p++;
          starS = s;
        } else if (t && tokMatches(t, name[s])) {
          p++;
          s++;
        } else if (starP >= 0 && name[starS] !== '/') {
          p = starP + 1;
          s = ++starS;
        } else return false;
      }
      while (toks[p]?.k === 'star') p++;
      return p === toks.length;
    },
  };
  return m;
}
