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

/** Glob pattern (`*`, `?`, `[abc]`) for one path component. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const j = glob.indexOf(']', i + 1);
      if (j > i) {
        re += '[' + glob.slice(i + 1, j).replace(/^!/, '^').replace(/\\/g, '\\\\') + ']';
        i = j;
      } else re += '\\[';
    } else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
