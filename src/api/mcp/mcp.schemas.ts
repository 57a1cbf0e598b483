/**
 * The JSON-RPC bodies the MCP endpoints take, as the MCP SDK's own zod schemas check them:
 * the routes check a body with these before the SDK's transport sees it, and the OpenAPI
 * document shows the same schemas.
 */
import { InitializeRequestSchema, JSONRPCMessageSchema, RequestIdSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** `initialize`, the first request of a streamable HTTP session (a JSON-RPC request: nothing beside jsonrpc, id, method and params). */
export const mcpInitializeRequestSchema = InitializeRequestSchema.extend({ jsonrpc: z.literal('2.0'), id: RequestIdSchema })
  .strict()
  .describe('The JSON-RPC initialize request');

/** One JSON-RPC message: a request, a notification or a response. */
export const mcpMessageSchema = (JSONRPCMessageSchema as unknown as z.ZodType).describe('One JSON-RPC 2.0 message: a request, a notification or a response');
