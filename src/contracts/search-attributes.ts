/** Search attributes of session workflows (created on the namespace by scripts/infra.sh and the compose setup). */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SessionStatusKey = defineSearchAttributeKey('SessionStatus', SearchAttributeType.KEYWORD);
export const OwnerUserIdKey = defineSearchAttributeKey('OwnerUserId', SearchAttributeType.KEYWORD);
export const TriggerIdKey = defineSearchAttributeKey('TriggerId', SearchAttributeType.KEYWORD);
