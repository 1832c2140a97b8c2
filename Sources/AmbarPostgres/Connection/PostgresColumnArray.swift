import AmbarCore
import Foundation
import NIOCore
import PostgresNIO

/// One column's values for many rows, as a one-dimensional PostgreSQL array in the binary format,
/// NULL elements included — which postgres-nio's own array encoding (of non-optional elements)
/// cannot send. A many-row insert sends one of these per column and reads them back as rows with
/// `unnest`, so its text and its parameters are the same whatever the number of rows:
///
/// ```swift
/// var bindings = PostgresBindings()
/// bindings.append(PostgresColumnArray(.texts(["a", nil, "c"])))
/// // INSERT INTO t (name) SELECT * FROM unnest($1::text[])
/// ```
struct PostgresColumnArray: PostgresDynamicTypeEncodable {
    let column: SQLServerColumn

    init(_ column: SQLServerColumn) {
        self.column = column
    }

    var psqlType: PostgresDataType {
        switch column {
        case .integers: .int8Array
        case .reals: .float8Array
        case .texts: .textArray
        case .blobs: .byteaArray
        }
    }

    var psqlFormat: PostgresFormat { .binary }

    /// The element type's OID and the values.
    private var elementType: PostgresDataType {
        switch column {
        case .integers: .int8
        case .reals: .float8
        case .texts: .text
        case .blobs: .bytea
        }
    }

    /// PostgreSQL's binary array: dimensions, a has-NULLs flag, the element type, each
    /// dimension's length and lower bound, then each element as a length (-1: NULL) and its bytes.
    func encode<JSONEncoder: PostgresJSONEncoder>(into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) {
        let count: Int
        let hasNull: Bool
        switch column {
        case .integers(let values): (count, hasNull) = (values.count, values.contains(nil))
        case .reals(let values): (count, hasNull) = (values.count, values.contains(nil))
        case .texts(let values): (count, hasNull) = (values.count, values.contains(nil))
        case .blobs(let values): (count, hasNull) = (values.count, values.contains(nil))
        }
        buffer.writeInteger(Int32(count == 0 ? 0 : 1))
        buffer.writeInteger(Int32(hasNull ? 1 : 0))
        buffer.writeInteger(elementType.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(count))
        buffer.writeInteger(Int32(1))
        // Each element: its length in bytes (-1: NULL), then its bytes.
        switch column {
        case .integers(let values):
            for value in values {
                guard let value else {
                    buffer.writeInteger(Int32(-1))
                    continue
                }
                buffer.writeInteger(Int32(8))
                buffer.writeInteger(value)
            }
        case .reals(let values):
            for value in values {
                guard let value else {
                    buffer.writeInteger(Int32(-1))
                    continue
                }
                buffer.writeInteger(Int32(8))
                buffer.writeInteger(value.bitPattern)
            }
        case .texts(let values):
            for value in values {
                guard let value else {
                    buffer.writeInteger(Int32(-1))
                    continue
                }
                buffer.writeInteger(Int32(value.utf8.count))
                buffer.writeString(value)
            }
        case .blobs(let values):
            for value in values {
                guard let value else {
                    buffer.writeInteger(Int32(-1))
                    continue
                }
                buffer.writeInteger(Int32(value.count))
                buffer.writeBytes(value)
            }
        }
    }
}
