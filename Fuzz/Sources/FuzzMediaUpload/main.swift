// An upload's bytes, whatever they are: signature sniffing, header parsing, metadata stripping
// and the libvips decode under small limits must refuse (415, 413 or 422) or give an image that
// holds together — never crash, never read outside the buffer (AddressSanitizer), never decode
// more pixels than the header was allowed to declare.
import Media

/// Small limits, so that each input decodes in milliseconds.
private let limits = MediaLimits(maxBytes: 1 << 20, maxPixels: 4_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMediaUpload(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let raw = UnsafeRawBufferPointer(start: data, count: size)
    _ = ImageFormat.describe(raw)
    // Every stripper on every input, whatever its signature says.
    for format in ImageFormat.allCases {
        if let size = ImageHeader.size(of: raw, format: format) { precondition(size.width > 0 && size.height > 0) }
        _ = MetadataStripping.stripped(raw, format: format, orientation: Int(bytes.first ?? 1) % 9)
    }
    do {
        let image = try MediaProcessing.process(bytes, declaredType: nil, limits: limits)
        let format = image.original.withUnsafeBytes { ImageFormat.sniff($0) }
        precondition(format == image.format, "the stripped original is no longer a \(image.format)")
        precondition(image.width * image.height <= limits.maxPixels, "decoded beyond the pixel limit")
        precondition(image.variants.map(\.width) == MediaProcessing.variantWidths.filter { $0 <= image.width })
        for variant in image.variants {
            let size = variant.webp.withUnsafeBytes { ImageHeader.size(of: $0, format: .webp) }
            precondition(size?.width == variant.width, "a variant is not as wide as it says")
        }
    } catch {
        precondition([413, 415, 422].contains(error.status), "refused with \(error.status)")
        precondition(!error.message.isEmpty)
    }
    return 0
}
