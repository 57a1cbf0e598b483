/**
 * How an MCP tool call answers: a result with text and structured content, a service error
 * as a tool error, or a session that is not found as the JSON-RPC error of the call.
 */
import { ErrorCode, McpError, type CallToolResult, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { isServiceError, ServiceError } from '../../contracts/errors';
import type { Logger } from '../../logger';

export interface ToolExtra {
  _meta?: { progressToken?: string | number };
  signal: AbortSignal;
  sendNotification: (n: ServerNotification) => Promise<void>;
}

export const result = (structured: Record<string, unknown>, text: string): CallToolResult => ({ content: [{ type: 'text', text }], structuredContent: structured });

/** A service error as an MCP tool error: `isError`, the code in the text and in the structured content. */
export function toolError(err: unknown): CallToolResult {
  const e = isServiceError(err) ? err : new ServiceError('INTERNAL_ERROR', 'Internal server error');
  return { isError: true, content: [{ type: 'text', text: `${e.code}: ${e.message}` }], structuredContent: e.toBody() };
}

export const INVALID = Symbol('invalid arguments');
export const ESCALATE = Symbol('JSON-RPC error of the call');

/** The contract's MCP codes (Errors, Formats): -32603 session not found, -32600 invalid request. */
export const MCP_SESSION_NOT_FOUND = ErrorCode.InternalError;
export const MCP_INVALID_REQUEST = ErrorCode.InvalidRequest;

/** A JSON-RPC error whose message is the text itself (McpError prefixes "MCP error <code>: "). */
export class JsonRpcError extends McpError {
  constructor(code: number, message: string) {
    super(code, message);
    this.message = message;
  }
}

/** A browser session the caller does not have (unknown, ended or another user's): JSON-RPC -32603. */
const sessionNotFound = (message = 'Session not found') => new JsonRpcError(MCP_SESSION_NOT_FOUND, message);
const isSessionNotFound = (err: unknown): err is ServiceError => isServiceError(err) && err.code === 'SESSION_NOT_FOUND';

export type CallExtra = Record<PropertyKey, unknown> & { [ESCALATE]?: { error?: McpError } };

/**
 * Runs a tool's body: arguments refused by the schema answer as the REST error, a session
 * not found is left for the call to throw as JSON-RPC -32603, any other error is a tool error.
 */
export const runTool =
  (logger: Logger, fn: (extra: ToolExtra) => Promise<CallToolResult>) =>
  async (extra: ToolExtra & { [INVALID]?: ServiceError; [ESCALATE]?: { error?: McpError } }) => {
    if (extra[INVALID]) return toolError(extra[INVALID]);
    try {
      return await fn(extra);
    } catch (err) {
      if (isSessionNotFound(err) && extra[ESCALATE]) {
        // Answered as the JSON-RPC error -32603 (see answerSessionNotFoundAsJsonRpcError).
        extra[ESCALATE].error = sessionNotFound(err.message);
        return toolError(err);
      }
      if (!isServiceError(err)) logger.error({ err }, 'MCP tool failed');
      return toolError(err);
    }
  };
