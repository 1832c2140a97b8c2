import AmbarCore
import AmbarSQLite
import Foundation

/// Model files: the project's JSON format (`<name>.json`) and Core Data's own model files
/// (`<name>.xcdatamodeld`, `<name>.xcdatamodel`, or their `contents` XML), so a Core Data model
/// is reused unchanged.
///
/// The JSON format, written by hand:
///
/// ```json
/// {"entities": [
///   {"name": "Product",
///    "attributes": [
///      {"name": "sku", "type": "string", "indexed": true},
///      {"name": "price", "type": "double", "default": 0},
///      {"name": "updatedAt", "type": "date", "optional": true}],
///    "relationships": [
///      {"name": "category", "destination": "Category", "inverse": "products"}],
///    "unique": [["sku"]]},
///   {"name": "Category",
///    "attributes": [{"name": "title", "type": "string"}],
///    "relationships": [
///      {"name": "products", "destination": "Product", "inverse": "category",
///       "toMany": true, "deleteRule": "cascade"}]}]}
/// ```
///
/// Entities: `name`, `parent`, `abstract`, `attributes`, `relationships`, `unique`, `indexes`
/// (lists of property names), `fetchedProperties` (`name`, `entityName`, `predicateFormat`).
/// Attributes: `name`, `type` (string, integer16, integer32, integer64, double, float, boolean,
/// date, binary, uuid, uri, decimal, transformable, undefined), `optional`, `default` (a plain
/// JSON value: dates as ISO 8601 text, binary as base64), `indexed`, `transient`,
/// `valueTransformerName`, `customClassName`, `derivation`, and the validation rules `minimum`,
/// `maximum` (a number or date; a length for strings and binary data) and `regularExpression`
/// (see ``AttributeValidation``). Relationships: `name`,
/// `destination`, `inverse`, `toMany`, `deleteRule` (nullify, cascade, deny, noAction),
/// `optional`, `ordered`, `transient`, `minCount`, `maxCount`. The model may have
/// `fetchRequests` (`name`, `entityName`, `predicateFormat`, `fetchLimit`). Unknown keys are
/// errors, not silently skipped.
/// The form the store keeps its model in (synthesized `Codable`) is read too.
public enum ModelFile {
    /// The file extensions a models directory is searched for, in order of preference.
    public static let extensions = ["json", "xcdatamodeld", "xcdatamodel"]

    /// Loads the model at `url`: a `.json` file, an `.xcdatamodeld` bundle (its current version),
    /// an `.xcdatamodel` bundle, or a Core Data `contents` file.
    ///
    /// - Throws: ``AmbarError/invalidModel(_:)`` naming the file and the element or key at fault,
    ///   or ``AmbarError/modelNotFound(name:searched:)`` when nothing is there.
    public static func load(_ url: URL) throws(AmbarError) -> ManagedObjectModel {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw .modelNotFound(name: url.lastPathComponent, searched: [url.deletingLastPathComponent().path])
        }
        switch url.pathExtension {
        case "xcdatamodeld":
            return try load(currentVersion(of: url))
        case "xcdatamodel":
            return try CoreDataModelReader.read(try contents(of: url.appendingPathComponent("contents")), path: url.path)
        default:
            let data = try contents(of: url)
            if url.pathExtension != "json" && data.first == UInt8(ascii: "<") {
                return try CoreDataModelReader.read(data, path: url.path)
            }
            return try JSONModelReader.read(data, path: url.path)
        }
    }

    /// The version an `.xcdatamodeld` bundle names in `.xccurrentversion`, or its only version.
    static func currentVersion(of bundle: URL) throws(AmbarError) -> URL {
        let marker = bundle.appendingPathComponent(".xccurrentversion")
        // try?: no readable .xccurrentversion: the bundle's only version is used, and several are an error below
        if let data = try? Data(contentsOf: marker),
            // try?: as above
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            let name = plist["_XCCurrentVersionName"] as? String
        {
            return bundle.appendingPathComponent(name)
        }
        // try?: a bundle that cannot be listed has no version: the error below says so
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: bundle.path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }.sorted()
        guard versions.count == 1, let only = versions.first else {
            throw .invalidModel(
                "\(bundle.path) has \(versions.count) versions and no .xccurrentversion naming the current one; add it (Xcode writes it) or pass the version's .xcdatamodel"
            )
        }
        return bundle.appendingPathComponent(only)
    }

    private static func contents(of url: URL) throws(AmbarError) -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw .invalidModel("cannot read \(url.path): \(error.localizedDescription)")
        }
    }
}
