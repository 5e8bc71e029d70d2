export type InputEdge = [key: number, scalarMask: number, childNodeId: number, enumNameIndex: number, flags: number];
export type OutputEdge = [key: number, argsNodeId: number, outputNodeId: number];
export interface Graph {
  inputs: InputEdge[][];
  outputs: OutputEdge[][];
  roots: OutputEdge[];
}
export const STRING_INDEX_SHIFT: number;
export function decodeGraph(base64url: string): Graph;
export function encodeGraph(graph: Graph): string;
export function shiftStringIndices(graph: Graph, by: number): Graph;
export function readParameterizationSchema(source: string): { strings: string[]; graph: string } | undefined;
export function compactParameterizationSchema(source: string): string | undefined;
