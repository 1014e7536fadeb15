/**
 * A multipart upload as the edge hands it to a use case: the form's fields and its files, each file
 * already on disk in the request's temporary directory. The edge fills it; the documents use case
 * reads it (and checks it against the spec's form, which JSON Schema checks only loosely).
 */

/** One received file, still in the request's temporary directory. */
export interface UploadedFile {
  tempPath: string;
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  /** The client's file name: a label only, never used as a path. */
  originalFilename: string | null;
  /** What the client said the part was; not trusted. */
  declaredType: string | null;
}

/** What a multipart request carried: every field value and every file part, by part name. */
export interface MultipartUpload {
  fields: Record<string, string[]>;
  files: Record<string, UploadedFile[]>;
}
