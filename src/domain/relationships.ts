import type { InverseRelationshipType, RelationshipType } from "./types.js";

const INVERSE_OF: Record<InverseRelationshipType, RelationshipType> = {
  child_of: "parent_of",
  blocked_by: "blocks",
  duplicated_by: "duplicates",
  split_into: "splits_from",
};

export interface Edge {
  from: string;
  to: string;
  type: RelationshipType;
}

/**
 * Inverse names are stored as their canonical type with the ends swapped; `relates_to` is
 * symmetric, so its ends are put in a fixed order to make A~B and B~A the same edge.
 */
export function normalizeEdge(from: string, to: string, type: RelationshipType | InverseRelationshipType): Edge {
  if (type in INVERSE_OF) {
    return { from: to, to: from, type: INVERSE_OF[type as InverseRelationshipType] };
  }
  const canonical = type as RelationshipType;
  if (canonical === "relates_to" && to < from) return { from: to, to: from, type: canonical };
  return { from, to, type: canonical };
}
