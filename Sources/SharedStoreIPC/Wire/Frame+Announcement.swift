import Foundation

extension Frame {
    /// The token a save's announcement (`didSave` or `tokenOnly`) names; `nil` for any other frame.
    var announcedToken: Int64? {
        switch self {
        case .didSave(let save): save.token
        case .tokenOnly(_, let token, _, _): token
        default: nil
        }
    }

    /// A save's announcement reduced to its token (a `tokenOnly` frame, which always fits in a
    /// frame: the receivers read the ledger through it); `nil` for any other frame.
    var reducedToToken: Frame? {
        switch self {
        case .didSave(let save): .tokenOnly(storeUUID: save.storeUUID, token: save.token, processID: save.processID, instanceID: save.instanceID)
        case .tokenOnly: self
        default: nil
        }
    }
}
