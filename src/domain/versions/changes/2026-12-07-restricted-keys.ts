/**
 * 2026-12-07: API keys gained the role `restricted` (a key limited by per-resource scopes). The
 * first version knows only `admin` and `member`, and a client on it may reject another value, so
 * earlier versions show a restricted key as `member` (not an admin key, which it is not); its
 * `scopes`, an added field, still say what it may do.
 */
import { eachExample, eachObject, narrowEnum, type Json, type VersionChange } from '../change.ts';

const KEY_OPERATIONS = ['listApiKeys', 'createApiKey', 'revokeApiKey'];

const isRestricted = (key: Json): key is { [key: string]: Json } => key !== null && typeof key === 'object' && !Array.isArray(key) && key.role === 'restricted';

export const restrictedKeys: VersionChange = {
  version: '2026-12-07',
  name: 'api-key-role-restricted',
  description: 'API keys gained the role `restricted`, limited by scopes. On earlier versions a restricted key is shown with the role `member`.',
  touches: { operations: KEY_OPERATIONS, schemas: ['ApiKeyRole', 'ApiKey'], events: [] },
  downgradeResponse(operationId, body) {
    if (!KEY_OPERATIONS.includes(operationId) || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
    if (Array.isArray(body.data)) return body.data.some(isRestricted) ? { ...body, data: body.data.map((key) => (isRestricted(key) ? { ...key, role: 'member' } : key)) } : body;
    return isRestricted(body) ? { ...body, role: 'member' } : body;
  },
  downgradeSpec(spec) {
    narrowEnum(spec, 'ApiKeyRole', ['restricted']);
    eachExample(spec, (value) => eachObject(value, (object) => {
      if (typeof object.keyId === 'string' && isRestricted(object)) object.role = 'member';
    }));
  },
};
