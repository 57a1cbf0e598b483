/**
 * The paths of an archive being validated, as a tree of path segments. Every check walks
 * one path once, segment by segment, so validating costs time in proportion to the
 * entries and their segments (a flat list of names made the checks of deep paths
 * quadratic), and memory in proportion to the distinct files and directories.
 */
import { ServiceError } from '../contracts/errors';

export type EntryKind = 'file' | 'directory' | 'symlink' | 'link';

export class InvalidArchiveError extends ServiceError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('INVALID_ARCHIVE', message, details);
  }
}

interface PathNode {
  name: string;
  parent: PathNode | null;
  /** Undefined only for the root; a path only crossed by deeper entries is a directory. */
  kind?: EntryKind;
  children?: Map<string, PathNode>;
  /** A symbolic link's target as written in the archive. */
  target?: string;
}

const pathOf = (node: PathNode): string => {
  const parts: string[] = [];
  for (let n: PathNode | null = node; n?.parent; n = n.parent) parts.push(n.name);
  return parts.reverse().join('/');
};

export class ArchivePaths {
  private readonly root: PathNode = { name: '', parent: null };
  private nodes = 0;
  private nameChars = 0;
  constructor(private readonly limits: { maxNodes: number; maxNameChars: number }) {}

  /**
   * Records an entry (`name` is `segments` joined; at least one segment, none '', '.' or '..'). Refuses a
   * path through a symbolic link or a file of the archive, and a name that was a directory
   * and is now something else (or the reverse). Answers the previous kind, if any.
   */
  add(name: string, segments: string[], kind: EntryKind, target?: string): EntryKind | undefined {
    let node = this.root;
    for (let i = 0; i < segments.length - 1; i++) {
      const child = this.child(node, segments[i], 'directory');
      if (child.kind === 'symlink') throw new InvalidArchiveError(`Entry "${name}" lies inside the symbolic link "${pathOf(child)}"`, { entry: name });
      if (child.kind !== 'directory') throw new InvalidArchiveError(`Entry "${name}" lies inside the file "${pathOf(child)}"`, { entry: name });
      node = child;
    }
    const last = segments[segments.length - 1];
    const existing = node.children?.get(last);
    const earlier = existing?.kind;
    if (existing && (earlier === 'directory') !== (kind === 'directory')) throw new InvalidArchiveError(`Entry "${name}" appears twice with different types`, { entry: name });
    const leaf = existing ?? this.child(node, last, kind);
    leaf.kind = kind;
    leaf.target = kind === 'symlink' ? target : undefined;
    return earlier;
  }

  /** The kind of an entry already recorded (hard link targets); undefined when there is none. */
  kindOf(segments: string[]): EntryKind | undefined {
    let node: PathNode | undefined = this.root;
    if (!segments.length) return undefined;
    for (const seg of segments) {
      node = node.children?.get(seg);
      if (!node) return undefined;
    }
    return node.kind;
  }

  /**
   * Lexical checks of a link's target hold until its walk passes through another link:
   * after one, ".." means the parent of wherever that link leads, so it is refused. Run
   * once every entry is known (later entries can change what a target means).
   */
  checkSymlinkChains(): void {
    const stack: PathNode[] = [this.root];
    while (stack.length) {
      const node = stack.pop()!;
      if (node.kind === 'symlink') this.checkChain(node);
      if (node.children) for (const c of node.children.values()) stack.push(c);
    }
  }

  private checkChain(link: PathNode): void {
    const target = link.target ?? '';
    const refuse = () => {
      const name = pathOf(link);
      return new InvalidArchiveError(`Symbolic link "${name}" points outside the archive root through another link (to "${target}")`, { entry: name, target });
    };
    let cur = link.parent!;
    // Segments below `cur` that name nothing in the archive (no link can lie there).
    let beyond = 0;
    let viaLink = false;
    for (const seg of target.split('/')) {
      if (!seg || seg === '.') continue;
      if (seg === '..') {
        if (viaLink) throw refuse();
        if (beyond > 0) beyond--;
        else if (!cur.parent) throw refuse();
        else cur = cur.parent;
        continue;
      }
      const next = beyond === 0 ? cur.children?.get(seg) : undefined;
      if (!next) {
        beyond++;
        continue;
      }
      cur = next;
      if (cur.kind === 'symlink') viaLink = true;
    }
  }

  private child(parent: PathNode, name: string, kind: EntryKind): PathNode {
    const found = parent.children?.get(name);
    if (found) return found;
    const { maxNodes, maxNameChars } = this.limits;
    if (++this.nodes > maxNodes) throw new InvalidArchiveError(`The archive's paths name more than ${maxNodes} files and directories`, { maxNodes });
    this.nameChars += name.length;
    if (this.nameChars > maxNameChars) throw new InvalidArchiveError(`The archive's file and directory names add up to more than ${maxNameChars} characters`, { maxNameChars });
    const node: PathNode = { name, parent, kind };
    (parent.children ??= new Map()).set(name, node);
    return node;
  }
}
